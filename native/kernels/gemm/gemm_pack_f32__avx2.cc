// SPDX-License-Identifier: Apache-2.0
// AVX2 A-panel packer for the 6x16 micro-kernel (layout in gemm.h): row-major A is read 8 k-values
// per row at a time and transposed in registers, instead of 6 scalar strided stores per k.
#include <immintrin.h>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/pack_a_panels.h"
#include "kernels/gemm/transpose_avx2.h"

namespace flexpipe {

namespace {

alignas(32) const int32_t first6[8] = {-1, -1, -1, -1, -1, -1, 0, 0};

// One full 6-row panel of row-major A: dst[k * 6 + i] = alpha * a[i * a_rs + k].
void pack_panel_6(int64_t kc, const float* a, int64_t a_rs, float alpha, float* dst) {
    const __m256 va = _mm256_set1_ps(alpha);
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(first6));
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r[8], t[8];
        for (int i = 0; i < 6; ++i) r[i] = _mm256_mul_ps(va, _mm256_loadu_ps(a + i * a_rs + k));
        r[6] = r[7] = _mm256_setzero_ps();
        transpose_8x8_avx2(r, t);  // lanes 0..5 of t[k] are A[0..5, k]
        float* d = dst + k * 6;
        // Each 8-wide store spills 2 lanes into the next k's slots, which the next store rewrites;
        // the last one is masked so nothing is written past this chunk.
        for (int j = 0; j < 7; ++j) _mm256_storeu_ps(d + j * 6, t[j]);
        _mm256_maskstore_ps(d + 42, mask, t[7]);
    }
    for (; k < kc; ++k)
        for (int i = 0; i < 6; ++i) dst[k * 6 + i] = alpha * a[i * a_rs + k];
}

}  // namespace

void gemm_pack_a_f32__avx2(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                           float alpha, float* dst) {
    pack_a_full_panels<6>(mr, rows, kc, a, a_rs, a_cs, alpha, dst, pack_panel_6, gemm_pack_a_f32__ref);
}

}  // namespace flexpipe
