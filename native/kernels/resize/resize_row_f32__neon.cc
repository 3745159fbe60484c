// SPDX-License-Identifier: Apache-2.0
// NEON row micro-kernels of the specialised nearest and linear Resize paths (contract in resize.h).
//
// replicate: s = 2 zips a vector with itself (v0 v0 v1 v1 | v2 v2 v3 v3), s = 4 duplicates each lane
// into a vector, other s store one duplicated lane s / 4 times. gather, lerp and blend are
// resize_row_impl.h over VecNeon (NEON has no gather: lanes are loaded one by one).
#include <arm_neon.h>

#include "kernels/resize/resize_row_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

// s = 2: v0 v0 v1 v1 | v2 v2 v3 v3 by zips; s = 4: one lane duplicated per vector.
void resize_rep_f32__neon(const float* x, float* y, int64_t n, int64_t s) {
    auto permutes = [](const float* x, float* y, int64_t n, int64_t s) __attribute__((always_inline)) -> int64_t {
        int64_t j = 0;
        if (s == 2) {
            for (; j + 4 <= n; j += 4) {
                const float32x4_t v = vld1q_f32(x + j);
                vst1q_f32(y + 2 * j, vzip1q_f32(v, v));
                vst1q_f32(y + 2 * j + 4, vzip2q_f32(v, v));
            }
            return j;
        }
        if (s != 4) return -1;
        for (; j + 4 <= n; j += 4) {
            const float32x4_t v = vld1q_f32(x + j);
            vst1q_f32(y + 4 * j, vdupq_laneq_f32(v, 0));
            vst1q_f32(y + 4 * j + 4, vdupq_laneq_f32(v, 1));
            vst1q_f32(y + 4 * j + 8, vdupq_laneq_f32(v, 2));
            vst1q_f32(y + 4 * j + 12, vdupq_laneq_f32(v, 3));
        }
        return j;
    };
    resize_rep_vec<VecNeon>(x, y, n, s, permutes);
}

void resize_gather_f32__neon(const float* x, const int32_t* idx, float* y, int64_t n) {
    resize_gather_vec<VecNeon>(x, idx, y, n);
}

void resize_lerp_f32__neon(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                         const float* w1, float* y, int64_t n) {
    resize_lerp_vec<VecNeon>(x, i0, i1, w0, w1, y, n);
}

void resize_blend_f32__neon(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    resize_blend_vec<VecNeon>(a, b, wa, wb, y, n);
}

}  // namespace flexpipe
