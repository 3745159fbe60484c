// SPDX-License-Identifier: Apache-2.0
// AVX2 float32 binary rows: eltwise_f32_impl.h over VecAvx2.
#include "kernels/eltwise/eltwise_f32_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void binary_f32__avx2(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
    binary_f32_vec<VecAvx2>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
