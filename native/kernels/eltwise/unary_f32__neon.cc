// SPDX-License-Identifier: Apache-2.0
// NEON float32 unary rows and Clip: eltwise_f32_impl.h over VecMath<VecNeon>.
#include "kernels/eltwise/eltwise_f32_impl.h"
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void unary_f32__neon(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    unary_f32_vec<VecMath<VecNeon>>(op, p, x, y, n);
}

void clip_f32__neon(const float* x, float* y, int64_t n, float lo, float hi) { clip_f32_vec<VecNeon>(x, y, n, lo, hi); }

}  // namespace flexpipe
