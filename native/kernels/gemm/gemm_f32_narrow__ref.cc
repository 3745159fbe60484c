// SPDX-License-Identifier: Apache-2.0
// Scalar narrow GEMM micro-kernel and the panel packer (contract in narrow.h).
#include "kernels/gemm/narrow.h"

namespace flexpipe {

void gemm_f32_narrow__ref(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                          const float* b, const int64_t* b_off, float* t, bool accumulate) {
    for (int64_t v = 0; v < panels; ++v) {
        const float* av = a + v * a_next;
        for (int64_t j = 0; j < cols; ++j) {
            float* tj = t + j * narrow_ldt + v * narrow_panel_rows;
            for (int64_t i = 0; i < narrow_panel_rows; ++i) {
                float acc = accumulate ? tj[i] : 0.0f;
                for (int64_t p = 0; p < kc; ++p) acc += av[p * narrow_panel_rows + i] * b[b_off[p] + j];
                tj[i] = acc;
            }
        }
    }
}

void gemm_pack_narrow_a(int64_t m, int64_t k, const float* a, int64_t a_rs, float* dst) {
    const int64_t panels = (m + narrow_panel_rows - 1) / narrow_panel_rows;
    for (int64_t q = 0; q < panels; ++q) {
        float* d = dst + q * k * narrow_panel_rows;
        for (int64_t i = 0; i < narrow_panel_rows; ++i) {
            const int64_t row = q * narrow_panel_rows + i;
            for (int64_t p = 0; p < k; ++p) d[p * narrow_panel_rows + i] = row < m ? a[row * a_rs + p] : 0.0f;
        }
    }
}

}  // namespace flexpipe
