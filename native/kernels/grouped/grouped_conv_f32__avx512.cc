// SPDX-License-Identifier: Apache-2.0
// Grouped convolution, AVX-512: grouped_impl.h over VecAvx512 (16 output columns or, with 16k channels
// per group and rows that are not whole vectors -- RegNet's planes --, 16 output channels per vector),
// and over VecAvx2 for other rows of at most 8 columns, where 16 lanes would leave more than half idle.
#include "kernels/grouped/grouped_impl.h"
#include "kernels/simd/vec_avx2.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {

void grouped_conv_f32__avx512(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end) {
    if (s.ow <= 8 && !grouped_channels_apply<VecAvx512>(s)) {
        grouped_conv_vec<VecAvx2>(s, x, w, bias, y, act, scratch, item_begin, item_end);
        return;
    }
    grouped_conv_vec<VecAvx512>(s, x, w, bias, y, act, scratch, item_begin, item_end);
}

}  // namespace flexpipe
