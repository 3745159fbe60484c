// SPDX-License-Identifier: Apache-2.0
// AVX2 row micro-kernels of the specialised nearest and linear Resize paths (contract in resize.h).
//
// replicate, 2 <= s <= 8: 8 inputs become s output vectors; lane l of output vector v is input
// (8v + l) / s, one vpermps each. s > 8: one broadcast per input, stored s / 8 times. gather, lerp and
// blend are resize_row_impl.h over VecAvx2 (vgatherdps on the index tables).
#include <immintrin.h>

#include "kernels/resize/resize_row_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

// 2 <= s <= 8: lane l of output vector v is input (8v + l) / s.
void resize_rep_f32__avx2(const float* x, float* y, int64_t n, int64_t s) {
    auto permutes = [](const float* x, float* y, int64_t n, int64_t s) __attribute__((always_inline)) -> int64_t {
        if (s > 8) return -1;
        __m256i perm[8];
        for (int64_t v = 0; v < s; ++v) {
            alignas(32) int32_t lanes[8];
            for (int l = 0; l < 8; ++l) lanes[l] = static_cast<int32_t>((8 * v + l) / s);
            perm[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
        }
        int64_t j = 0;
        for (; j + 8 <= n; j += 8) {
            const __m256 src = _mm256_loadu_ps(x + j);
            float* out = y + j * s;
            for (int64_t v = 0; v < s; ++v) _mm256_storeu_ps(out + 8 * v, _mm256_permutevar8x32_ps(src, perm[v]));
        }
        return j;
    };
    resize_rep_vec<VecAvx2>(x, y, n, s, permutes);
}

void resize_gather_f32__avx2(const float* x, const int32_t* idx, float* y, int64_t n) {
    resize_gather_vec<VecAvx2>(x, idx, y, n);
}

void resize_lerp_f32__avx2(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                         const float* w1, float* y, int64_t n) {
    resize_lerp_vec<VecAvx2>(x, i0, i1, w0, w1, y, n);
}

void resize_blend_f32__avx2(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    resize_blend_vec<VecAvx2>(a, b, wa, wb, y, n);
}

}  // namespace flexpipe
