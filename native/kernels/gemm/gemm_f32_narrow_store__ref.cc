// SPDX-License-Identifier: Apache-2.0
// Scalar epilogue of the narrow GEMM: a Cᵀ tile into C (contract in narrow.h).
#include "kernels/gemm/narrow.h"

namespace flexpipe {

void gemm_f32_narrow_store__ref(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    for (int64_t r = 0; r < rows; ++r) {
        const float b = bias ? bias[r] : 0.0f;
        for (int64_t j = 0; j < cols; ++j) {
            float v = t[j * narrow_ldt + r] + b + (add ? add[r * c_rs + j] : 0.0f);
            if (clamp) v = v < lo ? lo : (v > hi ? hi : v);  // NaN passes through
            c[r * c_rs + j] = v;
        }
    }
}

}  // namespace flexpipe
