// SPDX-License-Identifier: Apache-2.0
// NEON float32 attention for one head: attention_impl.h over VecMath<VecNeon>, 4x16 register tiles.
#include "kernels/attention/attention_impl.h"
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void attention_f32__neon(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
    attention_vec<VecMath<VecNeon>, 4>(a, row_begin, row_end, ws);
}

}  // namespace flexpipe
