// SPDX-License-Identifier: Apache-2.0
// Depthwise kh x kw convolution, AVX2: depthwise_kxk_impl.h over VecAvx2 (8 output columns per step).
#include "kernels/depthwise/depthwise_kxk_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void depthwise_f32_kxk__avx2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    depthwise_kxk_vec<VecAvx2>(s, x, w, bias, y, act, plane_begin, plane_end);
}

}  // namespace flexpipe
