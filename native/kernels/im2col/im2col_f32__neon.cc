// SPDX-License-Identifier: Apache-2.0
// NEON im2col: the copied part of a run moves 4 pixels per step; stride 2 takes the even lanes of a
// de-interleaving load (vld2q).
#include <arm_neon.h>

#include "kernels/im2col/im2col_walk.h"

namespace flexpipe {

namespace {

// Copies d[ow - a] = src[ow * sw + off] for ow from l in 4-pixel steps while they stay in [l, h) and
// inside the row; returns where it stopped.
int64_t copy_inside(float* d, int64_t a, const float* src, int64_t l, int64_t h, int64_t sw, int64_t off, int64_t row_len) {
    int64_t ow = l;
    if (sw == 1) {
        for (; ow + 4 <= h; ow += 4) vst1q_f32(d + ow - a, vld1q_f32(src + ow + off));
    } else if (sw == 2) {
        // A step reads src[2 ow + off, 2 ow + off + 8): stay inside the row.
        for (; ow + 4 <= h && 2 * ow + off + 8 <= row_len; ow += 4) vst1q_f32(d + ow - a, vld2q_f32(src + 2 * ow + off).val[0]);
    }
    return ow;
}

}  // namespace

void im2col_f32__neon(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end) {
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, copy_inside);
}

}  // namespace flexpipe
