// SPDX-License-Identifier: Apache-2.0
// Reference element-wise stage of Winograd convolution: one rows x 16 GEMM block over k input channels.
#include "common/macros.h"
#include "kernels/winograd/winograd.h"

namespace flexpipe {

// d[i][j] = sum_c a[i * a_stride + c] * b[c * 16 + j], accumulated in c order.
void winograd_f32_6x16__ref(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                            int64_t d_stride, int rows) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    for (int i = 0; i < rows; ++i) {
        float acc[winograd_nr] = {0.0f};
        const float* ai = a + i * a_stride;
        for (int64_t c = 0; c < k; ++c) {
            const float av = ai[c];
            for (int j = 0; j < winograd_nr; ++j) acc[j] += av * b[c * winograd_nr + j];
        }
        for (int j = 0; j < winograd_nr; ++j) d[i * d_stride + j] = acc[j];
    }
}

}  // namespace flexpipe
