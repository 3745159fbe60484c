// SPDX-License-Identifier: Apache-2.0
// Grouped convolution, NEON: grouped_impl.h over VecNeon (4 output columns per vector, tiles of up to 16 channels).
#include "kernels/grouped/grouped_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void grouped_conv_f32__neon(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end) {
    grouped_conv_vec<VecNeon>(s, x, w, bias, y, act, scratch, item_begin, item_end);
}

}  // namespace flexpipe
