// SPDX-License-Identifier: Apache-2.0
// The stem convolution by rows, AVX2 + FMA: blocks of 6 output channels x 16 output columns in 12 ymm
// accumulators (conv_stem_rows_impl.h over VecAvx2).
#include "kernels/conv_stem/conv_stem_rows_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void conv_stem_rows_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias,
                              const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    conv_stem_rows_vec<VecAvx2>(s, x, w, bias, act, y, ring, row_begin, row_end);
}

}  // namespace flexpipe
