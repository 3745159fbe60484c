// SPDX-License-Identifier: Apache-2.0
// NEON float32 Softmax over a dense vector: softmax_impl.h over VecMath<VecNeon>.
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_neon.h"
#include "kernels/softmax/softmax_impl.h"

namespace flexpipe {

void softmax_f32__neon(const float* x, float* y, int64_t n, int64_t stride) { softmax_vec<VecMath<VecNeon>>(x, y, n, stride); }

}  // namespace flexpipe
