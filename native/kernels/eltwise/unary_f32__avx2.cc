// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 unary rows and Clip: eltwise_f32_impl.h over VecMath<VecAvx2>.
#include "kernels/eltwise/eltwise_f32_impl.h"
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void unary_f32__avx2(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    unary_f32_vec<VecMath<VecAvx2>>(op, p, x, y, n);
}

void clip_f32__avx2(const float* x, float* y, int64_t n, float lo, float hi) { clip_f32_vec<VecAvx2>(x, y, n, lo, hi); }

}  // namespace flexpipe
