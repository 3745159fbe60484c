// SPDX-License-Identifier: Apache-2.0
// The stem convolution by rows, NEON: blocks of 6 output channels x 16 output columns in 24 q-register
// accumulators (conv_stem_rows_impl.h over VecNeon).
#include "kernels/conv_stem/conv_stem_rows_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void conv_stem_rows_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias,
                              const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    conv_stem_rows_vec<VecNeon>(s, x, w, bias, act, y, ring, row_begin, row_end);
}

}  // namespace flexpipe
