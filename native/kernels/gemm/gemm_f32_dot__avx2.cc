// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA row dots for a narrow right edge of C (contract in gemm.h): per row, one 8-lane
// accumulator per edge column over k, then a horizontal sum and the scalar epilogue.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

namespace {

inline float hsum(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 d = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
}

template <int C>
void dot_rows(int64_t rows, int64_t k, const float* a, int64_t a_rs, const float* bt, float* c, int64_t ldc,
              const GemmTileParams& p) {
    for (int64_t i = 0; i < rows; ++i) {
        const float* ar = a + i * a_rs;
        __m256 acc[C];
        for (int t = 0; t < C; ++t) acc[t] = _mm256_setzero_ps();
        int64_t q = 0;
        for (; q + 8 <= k; q += 8) {
            const __m256 av = _mm256_loadu_ps(ar + q);
            for (int t = 0; t < C; ++t) acc[t] = _mm256_fmadd_ps(av, _mm256_loadu_ps(bt + t * k + q), acc[t]);
        }
        for (int t = 0; t < C; ++t) {
            float s = hsum(acc[t]);
            for (int64_t r = q; r < k; ++r) s += ar[r] * bt[t * k + r];
            gemm_dot_store(s, i, t, c, ldc, p);
        }
    }
}

}  // namespace

void gemm_f32_dot__avx2(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(cols >= 1 && cols <= gemm_dot_max_cols && k >= 0);
    gemm_dot_cols(cols, [&](auto n) { dot_rows<decltype(n)::value>(rows, k, a, a_rs, bt, c, ldc, p); });
}

}  // namespace flexpipe
