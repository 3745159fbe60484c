// SPDX-License-Identifier: Apache-2.0
// Element-wise stage of Winograd convolution, AVX2 + FMA: a 6 x 16 register block (12 accumulators).
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/winograd/winograd.h"

namespace flexpipe {

// Per input channel c: two loads of the U panel row (16 output channels), six broadcasts of the V
// values of six tiles, twelve FMAs. Rows past `rows` reuse the last valid row and are not stored.
void winograd_f32_6x16__avx2(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                             int64_t d_stride, int rows) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    const float* a0 = a;
    const float* a1 = rows > 1 ? a0 + a_stride : a0;
    const float* a2 = rows > 2 ? a1 + a_stride : a1;
    const float* a3 = rows > 3 ? a2 + a_stride : a2;
    const float* a4 = rows > 4 ? a3 + a_stride : a3;
    const float* a5 = rows > 5 ? a4 + a_stride : a4;
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps();
    __m256 c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps();
    __m256 c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int64_t c = 0; c < k; ++c) {
        const __m256 b0 = _mm256_loadu_ps(b + c * winograd_nr), b1 = _mm256_loadu_ps(b + c * winograd_nr + 8);
        __m256 av = _mm256_broadcast_ss(a0 + c);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1 + c);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2 + c);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a3 + c);
        c30 = _mm256_fmadd_ps(av, b0, c30);
        c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a4 + c);
        c40 = _mm256_fmadd_ps(av, b0, c40);
        c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a5 + c);
        c50 = _mm256_fmadd_ps(av, b0, c50);
        c51 = _mm256_fmadd_ps(av, b1, c51);
    }
    const __m256 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int i = 0; i < rows; ++i) {
        _mm256_storeu_ps(d + i * d_stride, acc[i][0]);
        _mm256_storeu_ps(d + i * d_stride + 8, acc[i][1]);
    }
}

}  // namespace flexpipe
