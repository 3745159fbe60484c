// SPDX-License-Identifier: Apache-2.0
// Depthwise kh x kw convolution, AVX512: depthwise_kxk_impl.h over VecAvx512 (16 output columns per step).
#include "kernels/depthwise/depthwise_kxk_impl.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {

void depthwise_f32_kxk__avx512(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                               const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    depthwise_kxk_vec<VecAvx512>(s, x, w, bias, y, act, plane_begin, plane_end);
}

}  // namespace flexpipe
