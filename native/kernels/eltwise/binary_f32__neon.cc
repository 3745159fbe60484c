// SPDX-License-Identifier: Apache-2.0
// NEON float32 binary rows: eltwise_f32_impl.h over VecNeon.
#include "kernels/eltwise/eltwise_f32_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void binary_f32__neon(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
    binary_f32_vec<VecNeon>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
