// SPDX-License-Identifier: Apache-2.0
// Reference row dots for a narrow right edge of C (contract in gemm.h).
#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

void gemm_f32_dot__ref(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                       float* c, int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(cols >= 1 && cols <= gemm_dot_max_cols && k >= 0);
    for (int64_t i = 0; i < rows; ++i) {
        const float* ar = a + i * a_rs;
        for (int64_t t = 0; t < cols; ++t) {
            float acc = 0.0f;
            for (int64_t q = 0; q < k; ++q) acc += ar[q] * bt[t * k + q];
            gemm_dot_store(acc, i, t, c, ldc, p);
        }
    }
}

}  // namespace flexpipe
