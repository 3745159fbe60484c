// SPDX-License-Identifier: Apache-2.0
// NEON im2col: the walk of im2col_walk.h copying 4 pixels per step (im2col_copy_vec over VecNeon).
#include "kernels/im2col/im2col_walk.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void im2col_f32__neon(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end) {
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, im2col_copy_vec<VecNeon>);
}

}  // namespace flexpipe
