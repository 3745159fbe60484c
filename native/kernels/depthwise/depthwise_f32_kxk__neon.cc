// SPDX-License-Identifier: Apache-2.0
// Depthwise kh x kw convolution, NEON: depthwise_kxk_impl.h over VecNeon (4 output columns per step).
#include "kernels/depthwise/depthwise_kxk_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void depthwise_f32_kxk__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    depthwise_kxk_vec<VecNeon>(s, x, w, bias, y, act, plane_begin, plane_end);
}

}  // namespace flexpipe
