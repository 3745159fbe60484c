// SPDX-License-Identifier: Apache-2.0
// Winograd convolution kernels, AVX-512F: the run-time filter panel transform (winograd_impl.h over
// VecAvx512, a panel row in one zmm) and the element-wise GEMM; the transforms stay AVX2's.
//
// The GEMM is a 6 x 16 block, one zmm per tile row, specialised rather than winograd_gemm_vec<VecAvx512>:
// six rows give six dependent FMA chains, fewer than the 2 pipes x 4 cycles of latency a CPU with two
// 512-bit FMA pipes keeps busy, so even and odd input channels accumulate separately (12 chains) and are
// summed at the end.
#include <immintrin.h>

#include "kernels/simd/vec_avx512.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {

void winograd_f32_f63_filter_panel__avx512(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecAvx512, WinogradF63>(a, C, u);
}

void winograd_f32_f23_filter_panel__avx512(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecAvx512, WinogradF23>(a, C, u);
}

// Per pair of input channels: two loads of U panel rows (16 output channels each), twelve FMAs whose
// V operand is a broadcast from memory. Rows past `rows` reuse the last valid row and are not stored.
void winograd_f32_6x16__avx512(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                               int64_t d_stride, int rows) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    const float* ar[winograd_mr];
    ar[0] = a;
    for (int i = 1; i < winograd_mr; ++i) ar[i] = i < rows ? ar[i - 1] + a_stride : ar[i - 1];
    __m512 even[winograd_mr], odd[winograd_mr];
    for (int i = 0; i < winograd_mr; ++i) even[i] = odd[i] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 2 <= k; c += 2) {
        const __m512 b0 = _mm512_loadu_ps(b + c * winograd_nr), b1 = _mm512_loadu_ps(b + (c + 1) * winograd_nr);
#pragma GCC unroll 6
        for (int i = 0; i < winograd_mr; ++i) {
            even[i] = _mm512_fmadd_ps(_mm512_set1_ps(ar[i][c]), b0, even[i]);
            odd[i] = _mm512_fmadd_ps(_mm512_set1_ps(ar[i][c + 1]), b1, odd[i]);
        }
    }
    if (c < k) {
        const __m512 b0 = _mm512_loadu_ps(b + c * winograd_nr);
#pragma GCC unroll 6
        for (int i = 0; i < winograd_mr; ++i) even[i] = _mm512_fmadd_ps(_mm512_set1_ps(ar[i][c]), b0, even[i]);
    }
    for (int i = 0; i < rows; ++i) _mm512_storeu_ps(d + i * d_stride, _mm512_add_ps(even[i], odd[i]));
}

}  // namespace flexpipe
