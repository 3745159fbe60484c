// SPDX-License-Identifier: Apache-2.0
// Direct convolution, NEON: conv_impl.h over VecNeon (blocks of 8 and 4 output columns).
#include "kernels/conv/conv_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void conv_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    int64_t item_begin, int64_t item_end) {
    conv_direct<VecNeon>(s, x, w, bias, y, item_begin, item_end);
}

}  // namespace flexpipe
