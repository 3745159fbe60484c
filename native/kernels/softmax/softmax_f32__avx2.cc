// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 Softmax over a dense vector: softmax_impl.h over VecMath<VecAvx2>.
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_avx2.h"
#include "kernels/softmax/softmax_impl.h"

namespace flexpipe {

void softmax_f32__avx2(const float* x, float* y, int64_t n, int64_t stride) { softmax_vec<VecMath<VecAvx2>>(x, y, n, stride); }

}  // namespace flexpipe
