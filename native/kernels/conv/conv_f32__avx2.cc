// SPDX-License-Identifier: Apache-2.0
// Direct convolution, AVX2 + FMA: conv_impl.h over VecAvx2 (blocks of 16 and 8 output columns).
#include "kernels/conv/conv_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void conv_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    int64_t item_begin, int64_t item_end) {
    conv_direct<VecAvx2>(s, x, w, bias, y, item_begin, item_end);
}

}  // namespace flexpipe
