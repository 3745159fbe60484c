// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 attention for one head: attention_impl.h over VecMath<VecAvx2>, 6x16 register tiles.
#include "kernels/attention/attention_impl.h"
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void attention_f32__avx2(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
    attention_vec<VecMath<VecAvx2>, 6>(a, row_begin, row_end, ws);
}

}  // namespace flexpipe
