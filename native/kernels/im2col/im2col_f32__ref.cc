// SPDX-License-Identifier: Apache-2.0
// Reference im2col, float32: per column-matrix row, runs of output columns are copied or zero-filled.
#include "kernels/im2col/im2col_walk.h"

namespace flexpipe {

namespace {

void fill_run(float* d, const float* src, int64_t a, int64_t b, int64_t lo, int64_t hi, int64_t sw, int64_t off,
              int64_t /*row_len*/) {
    int64_t l, h;
    im2col_inside(src, a, b, lo, hi, &l, &h);
    for (int64_t ow = a; ow < l; ++ow) d[ow - a] = 0.0f;
    if (sw == 1) {
        for (int64_t ow = l; ow < h; ++ow) d[ow - a] = src[ow + off];
    } else {
        for (int64_t ow = l; ow < h; ++ow) d[ow - a] = src[ow * sw + off];
    }
    for (int64_t ow = h; ow < b; ++ow) d[ow - a] = 0.0f;
}

}  // namespace

void im2col_f32__ref(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                     float* col, int64_t k_begin, int64_t k_end) {
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, fill_run);
}

}  // namespace flexpipe
