// SPDX-License-Identifier: Apache-2.0
// AVX2 epilogue of the narrow GEMM (contract in narrow.h): 8 columns of the Cᵀ tile (8 rows each)
// are one 8x8 block, which the shared register transpose (transpose_avx2.h) turns into 8 rows of C.
// A block narrower than 8 columns is written through a lane mask.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"
#include "kernels/gemm/transpose_avx2.h"

namespace flexpipe {

void gemm_f32_narrow_store__avx2(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    FLEXPIPE_DCHECK(rows >= 0 && rows <= narrow_ldt && cols >= 0);
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    for (int64_t r0 = 0; r0 < rows; r0 += 8) {
        const int64_t nr = rows - r0 < 8 ? rows - r0 : 8;
        for (int64_t j0 = 0; j0 < cols; j0 += 8) {
            const int64_t nc = cols - j0 < 8 ? cols - j0 : 8;
            const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nc)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            __m256 col[8], v[8];
            for (int j = 0; j < 8; ++j)
                col[j] = j < nc ? _mm256_loadu_ps(t + (j0 + j) * narrow_ldt + r0) : _mm256_setzero_ps();
            transpose_8x8_avx2(col, v);  // col[j] = column j of the block -> v[i] = row i
            for (int64_t i = 0; i < nr; ++i) {
                const int64_t r = r0 + i;
                __m256 x = v[i];
                if (bias) x = _mm256_add_ps(x, _mm256_set1_ps(bias[r]));
                if (add) x = _mm256_add_ps(x, _mm256_maskload_ps(add + r * c_rs + j0, m));
                // vmaxps/vminps return their second operand on NaN: x second lets a NaN pass.
                if (clamp) x = _mm256_min_ps(vhi, _mm256_max_ps(vlo, x));
                if (nc == 8) {
                    _mm256_storeu_ps(c + r * c_rs + j0, x);
                } else {
                    _mm256_maskstore_ps(c + r * c_rs + j0, m, x);
                }
            }
        }
    }
}

}  // namespace flexpipe
