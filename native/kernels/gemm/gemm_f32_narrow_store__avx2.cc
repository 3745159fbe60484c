// SPDX-License-Identifier: Apache-2.0
// AVX2 epilogue of the narrow GEMM (contract in narrow.h): 8 columns of the Cᵀ tile (8 rows each)
// are one 8x8 block; unpacklo/hi of floats, then of float pairs, then a 128-bit lane permute turn it
// into 8 rows of C. A block narrower than 8 columns is written through a lane mask.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"

namespace flexpipe {

namespace {

// r[j] (j < 8) = column j of the block (8 rows) -> r[i] = row i (8 columns).
__attribute__((always_inline)) inline void transpose8(__m256 (&r)[8]) {
    __m256 a[8], b[8];
    for (int i = 0; i < 4; ++i) {
        a[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // b[4 i + q], 128-bit lane l: rows 4i..4i+3 of column 4 l + q.
    for (int i = 0; i < 2; ++i) {
        const __m256d a0 = _mm256_castps_pd(a[4 * i]), a1 = _mm256_castps_pd(a[4 * i + 1]);
        const __m256d a2 = _mm256_castps_pd(a[4 * i + 2]), a3 = _mm256_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm256_castpd_ps(_mm256_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(a1, a3));
    }
    for (int q = 0; q < 4; ++q) {
        r[q] = _mm256_permute2f128_ps(b[q], b[4 + q], 0x20);
        r[4 + q] = _mm256_permute2f128_ps(b[q], b[4 + q], 0x31);
    }
}

}  // namespace

void gemm_f32_narrow_store__avx2(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    FLEXPIPE_DCHECK(rows >= 0 && rows <= narrow_ldt && cols >= 0);
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    for (int64_t r0 = 0; r0 < rows; r0 += 8) {
        const int64_t nr = rows - r0 < 8 ? rows - r0 : 8;
        for (int64_t j0 = 0; j0 < cols; j0 += 8) {
            const int64_t nc = cols - j0 < 8 ? cols - j0 : 8;
            const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nc)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            __m256 v[8];
            for (int j = 0; j < 8; ++j)
                v[j] = j < nc ? _mm256_loadu_ps(t + (j0 + j) * narrow_ldt + r0) : _mm256_setzero_ps();
            transpose8(v);
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
