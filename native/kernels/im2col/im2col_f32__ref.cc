// SPDX-License-Identifier: Apache-2.0
// Reference im2col, float32: per column-matrix row, runs of output columns are copied or zero-filled.
#include "kernels/im2col/im2col_walk.h"

namespace flexpipe {

void im2col_f32__ref(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                     float* col, int64_t k_begin, int64_t k_end) {
    // No vector part: the walk copies every inside pixel one by one.
    auto copy_inside = [](float*, int64_t, const float*, int64_t l, int64_t, int64_t, int64_t, int64_t) { return l; };
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, copy_inside);
}

}  // namespace flexpipe
