// SPDX-License-Identifier: Apache-2.0
// AVX-512 float32 unary rows: eltwise_f32_impl.h over VecMath<VecAvx512> (16 lanes: the transcendental
// rows -- exp, sigmoid, SiLU, GELU, tanh, erf -- are compute-bound, so they take twice AVX2's lanes per
// instruction; Clip and the binary rows, bound by memory, keep AVX2's).
#include "kernels/eltwise/eltwise_f32_impl.h"
#include "kernels/eltwise/vmath_impl.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {

void unary_f32__avx512(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    unary_f32_vec<VecMath<VecAvx512>>(op, p, x, y, n);
}

}  // namespace flexpipe
