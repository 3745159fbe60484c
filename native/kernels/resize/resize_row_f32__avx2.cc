// SPDX-License-Identifier: Apache-2.0
// AVX2 row micro-kernels of the specialised nearest and linear Resize paths (contract in resize.h).
//
// replicate, 2 <= s <= 8: 8 inputs become s output vectors; lane l of output vector v is input
// (8v + l) / s, one vpermps each. s > 8: one broadcast per input, stored s / 8 times. gather and lerp
// use vgatherdps on the index tables; blend is one FMA per 8 outputs.
#include <immintrin.h>

#include <cstring>

#include "kernels/resize/resize.h"

namespace flexpipe {

void resize_rep_f32__avx2(const float* x, float* y, int64_t n, int64_t s) {
    int64_t j = 0;
    if (s == 1) {
        std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
        return;
    }
    if (s <= 8) {
        __m256i perm[8];
        for (int64_t v = 0; v < s; ++v) {
            alignas(32) int32_t lanes[8];
            for (int l = 0; l < 8; ++l) lanes[l] = static_cast<int32_t>((8 * v + l) / s);
            perm[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
        }
        for (; j + 8 <= n; j += 8) {
            const __m256 src = _mm256_loadu_ps(x + j);
            float* out = y + j * s;
            for (int64_t v = 0; v < s; ++v)
                _mm256_storeu_ps(out + 8 * v, _mm256_permutevar8x32_ps(src, perm[v]));
        }
    } else {
        for (; j < n; ++j) {
            const __m256 v = _mm256_set1_ps(x[j]);
            float* out = y + j * s;
            int64_t r = 0;
            for (; r + 8 <= s; r += 8) _mm256_storeu_ps(out + r, v);
            for (; r < s; ++r) out[r] = x[j];
        }
    }
    for (; j < n; ++j)
        for (int64_t r = 0; r < s; ++r) y[j * s + r] = x[j];
}

void resize_gather_f32__avx2(const float* x, const int32_t* idx, float* y, int64_t n) {
    int64_t o = 0;
    for (; o + 8 <= n; o += 8) {
        const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + o));
        _mm256_storeu_ps(y + o, _mm256_i32gather_ps(x, i, 4));
    }
    for (; o < n; ++o) y[o] = x[idx[o]];
}

void resize_lerp_f32__avx2(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                           const float* w1, float* y, int64_t n) {
    int64_t o = 0;
    for (; o + 8 <= n; o += 8) {
        const __m256 a =
            _mm256_i32gather_ps(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(i0 + o)), 4);
        const __m256 b =
            _mm256_i32gather_ps(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(i1 + o)), 4);
        _mm256_storeu_ps(
            y + o, _mm256_fmadd_ps(a, _mm256_loadu_ps(w0 + o), _mm256_mul_ps(b, _mm256_loadu_ps(w1 + o))));
    }
    for (; o < n; ++o) y[o] = x[i0[o]] * w0[o] + x[i1[o]] * w1[o];
}

void resize_blend_f32__avx2(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    const __m256 va = _mm256_set1_ps(wa), vb = _mm256_set1_ps(wb);
    int64_t o = 0;
    for (; o + 8 <= n; o += 8)
        _mm256_storeu_ps(
            y + o, _mm256_fmadd_ps(_mm256_loadu_ps(a + o), va, _mm256_mul_ps(_mm256_loadu_ps(b + o), vb)));
    for (; o < n; ++o) y[o] = a[o] * wa + b[o] * wb;
}

}  // namespace flexpipe
