// SPDX-License-Identifier: Apache-2.0
// NEON row micro-kernels of the specialised nearest and linear Resize paths (contract in resize.h).
//
// replicate: s = 2 zips a vector with itself (v0 v0 v1 v1 | v2 v2 v3 v3), s = 4 duplicates each lane
// into a vector, other s store one duplicated lane s / 4 times. NEON has no gather: gather and lerp load
// lanes one by one (ld1 {v.s}[l]) and interpolate 4 outputs with one multiply and one fused multiply-add.
#include <arm_neon.h>

#include <cstring>

#include "kernels/resize/resize.h"

namespace flexpipe {

namespace {

inline float32x4_t gather4(const float* x, const int32_t* idx) {
    float32x4_t v = vdupq_n_f32(x[idx[0]]);
    v = vld1q_lane_f32(x + idx[1], v, 1);
    v = vld1q_lane_f32(x + idx[2], v, 2);
    return vld1q_lane_f32(x + idx[3], v, 3);
}

}  // namespace

void resize_rep_f32__neon(const float* x, float* y, int64_t n, int64_t s) {
    int64_t j = 0;
    if (s == 1) {
        std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
        return;
    }
    if (s == 2) {
        for (; j + 4 <= n; j += 4) {
            const float32x4_t v = vld1q_f32(x + j);
            vst1q_f32(y + 2 * j, vzip1q_f32(v, v));
            vst1q_f32(y + 2 * j + 4, vzip2q_f32(v, v));
        }
    } else if (s == 4) {
        for (; j + 4 <= n; j += 4) {
            const float32x4_t v = vld1q_f32(x + j);
            vst1q_f32(y + 4 * j, vdupq_laneq_f32(v, 0));
            vst1q_f32(y + 4 * j + 4, vdupq_laneq_f32(v, 1));
            vst1q_f32(y + 4 * j + 8, vdupq_laneq_f32(v, 2));
            vst1q_f32(y + 4 * j + 12, vdupq_laneq_f32(v, 3));
        }
    } else {
        for (; j < n; ++j) {
            const float32x4_t v = vdupq_n_f32(x[j]);
            float* out = y + j * s;
            int64_t r = 0;
            for (; r + 4 <= s; r += 4) vst1q_f32(out + r, v);
            for (; r < s; ++r) out[r] = x[j];
        }
    }
    for (; j < n; ++j)
        for (int64_t r = 0; r < s; ++r) y[j * s + r] = x[j];
}

void resize_gather_f32__neon(const float* x, const int32_t* idx, float* y, int64_t n) {
    int64_t o = 0;
    for (; o + 4 <= n; o += 4) vst1q_f32(y + o, gather4(x, idx + o));
    for (; o < n; ++o) y[o] = x[idx[o]];
}

void resize_lerp_f32__neon(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                           const float* w1, float* y, int64_t n) {
    int64_t o = 0;
    for (; o + 4 <= n; o += 4) {
        const float32x4_t b = vmulq_f32(gather4(x, i1 + o), vld1q_f32(w1 + o));
        vst1q_f32(y + o, vfmaq_f32(b, gather4(x, i0 + o), vld1q_f32(w0 + o)));
    }
    for (; o < n; ++o) y[o] = x[i0[o]] * w0[o] + x[i1[o]] * w1[o];
}

void resize_blend_f32__neon(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    int64_t o = 0;
    for (; o + 4 <= n; o += 4)
        vst1q_f32(y + o, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(b + o), wb), vld1q_f32(a + o), wa));
    for (; o < n; ++o) y[o] = a[o] * wa + b[o] * wb;
}

}  // namespace flexpipe
