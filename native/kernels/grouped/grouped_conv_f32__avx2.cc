// SPDX-License-Identifier: Apache-2.0
// Grouped convolution, AVX2: grouped_impl.h over VecAvx2 (8 output columns per vector, tiles of up to 8 channels).
#include "kernels/grouped/grouped_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void grouped_conv_f32__avx2(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end) {
    grouped_conv_vec<VecAvx2>(s, x, w, bias, y, act, scratch, item_begin, item_end);
}

}  // namespace flexpipe
