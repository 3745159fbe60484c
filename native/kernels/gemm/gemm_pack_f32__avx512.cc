// SPDX-License-Identifier: Apache-2.0
// A-panel packer for the 8x32 AVX-512 micro-kernel (layout in gemm.h): a full 8-row panel of
// row-major A is read 8 k-values per row at a time, an 8x8 block transposed in ymm registers whose
// columns are each k's 8 floats. Other shapes (partial panels, strided columns, another mr) take the
// AVX2 packer's path.
#include <immintrin.h>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/pack_a_panels.h"
#include "kernels/gemm/transpose_avx2.h"

namespace flexpipe {

namespace {

// One full 8-row panel of row-major A: dst[k * 8 + i] = alpha * a[i * a_rs + k].
void pack_panel_8(int64_t kc, const float* a, int64_t a_rs, float alpha, float* dst) {
    const __m256 va = _mm256_set1_ps(alpha);
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r[8], t[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_mul_ps(va, _mm256_loadu_ps(a + i * a_rs + k));
        transpose_8x8_avx2(r, t);
        for (int j = 0; j < 8; ++j) _mm256_storeu_ps(dst + (k + j) * 8, t[j]);
    }
    for (; k < kc; ++k)
        for (int i = 0; i < 8; ++i) dst[k * 8 + i] = alpha * a[i * a_rs + k];
}

}  // namespace

void gemm_pack_a_f32__avx512(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                             float alpha, float* dst) {
    // The rest goes to the AVX2 packer: its own 6-row path, or __ref for any other mr (a last partial
    // 8-row panel included).
    pack_a_full_panels<8>(mr, rows, kc, a, a_rs, a_cs, alpha, dst, pack_panel_8, gemm_pack_a_f32__avx2);
}

}  // namespace flexpipe
