// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, NEON: depthwise_impl.h over VecNeon (4 output columns per step).
#include "kernels/depthwise/depthwise_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void depthwise_f32_3x3__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    depthwise_3x3_vec<VecNeon>(s, x, w, bias, y, act, plane_begin, plane_end);
}

}  // namespace flexpipe
