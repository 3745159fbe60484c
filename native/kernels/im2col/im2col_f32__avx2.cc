// SPDX-License-Identifier: Apache-2.0
// AVX2 im2col: the walk of im2col_walk.h copying 8 pixels per step (im2col_copy_vec over VecAvx2).
#include "kernels/im2col/im2col_walk.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void im2col_f32__avx2(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end) {
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, im2col_copy_vec<VecAvx2>);
}

}  // namespace flexpipe
