// SPDX-License-Identifier: Apache-2.0
// NEON float32 LayerNormalization row: layernorm_impl.h over VecNeon.
#include "kernels/norm/layernorm_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void layernorm_row_f32__neon(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                             int64_t b_n, float epsilon, float* mean_out, float* inv_std_out) {
    layernorm_row_vec<VecNeon>(x, y, n, w, w_n, b, b_n, epsilon, mean_out, inv_std_out);
}

}  // namespace flexpipe
