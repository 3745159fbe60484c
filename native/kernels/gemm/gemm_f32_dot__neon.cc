// SPDX-License-Identifier: Apache-2.0
// NEON row dots for a narrow right edge of C (contract in gemm.h): per row, one 4-lane accumulator
// per edge column over k, then a horizontal sum (vaddvq) and the scalar epilogue.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

namespace {

template <int C>
void dot_rows(int64_t rows, int64_t k, const float* a, int64_t a_rs, const float* bt, float* c, int64_t ldc,
              const GemmTileParams& p) {
    for (int64_t i = 0; i < rows; ++i) {
        const float* ar = a + i * a_rs;
        float32x4_t acc[C];
        for (int t = 0; t < C; ++t) acc[t] = vdupq_n_f32(0.0f);
        int64_t q = 0;
        for (; q + 4 <= k; q += 4) {
            const float32x4_t av = vld1q_f32(ar + q);
            for (int t = 0; t < C; ++t) acc[t] = vfmaq_f32(acc[t], av, vld1q_f32(bt + t * k + q));
        }
        for (int t = 0; t < C; ++t) {
            float s = vaddvq_f32(acc[t]);
            for (int64_t r = q; r < k; ++r) s += ar[r] * bt[t * k + r];
            gemm_dot_store(s, i, t, c, ldc, p);
        }
    }
}

}  // namespace

void gemm_f32_dot__neon(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(cols >= 1 && cols <= gemm_dot_max_cols && k >= 0);
    gemm_dot_cols(cols, [&](auto n) { dot_rows<decltype(n)::value>(rows, k, a, a_rs, bt, c, ldc, p); });
}

}  // namespace flexpipe
