// SPDX-License-Identifier: Apache-2.0
// What the fused ops computed in bands of rows share (ConvMaxPool, conv_pool.h; ConvDepthwise,
// conv_depthwise.h): the band buffer size they aim at, and running a convolution by rows on one band
// of its output rows, its input rows copied out as an image of their own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv/conv.h"
#include "kernels/conv_stem/conv_stem_rows.h"

namespace flexpipe {

// Band buffer size the band heights aim at: about half of a 1-2 MiB L2, so the second layer reads what
// the first just wrote from L2.
constexpr int64_t band_buffer_target = 512 * 1024;

inline int64_t round_up64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Input rows [i0, i1) that output rows [c0, c1) of convolution cs read.
inline void conv_input_rows(const ConvShape& cs, int64_t c0, int64_t c1, int64_t* i0, int64_t* i1) {
    *i0 = std::max<int64_t>(0, c0 * cs.stride[1] - cs.pad[1]);
    *i1 = std::min<int64_t>(cs.in[1], (c1 - 1) * cs.stride[1] - cs.pad[1] + cs.kernel[1]);
    if (*i1 < *i0) *i1 = *i0;
}

// Output rows [c0, c1) of image n of cs (stem_applies) into out [M][c1 - c0][OW]: the input rows they
// read are copied into `in` ([C][rows][W] floats) and convolved by conv_stem_rows as an image of their own
// (the first band keeps the top padding, rows past the image stay zero), with `ring` its ring.
inline void conv_band_by_rows(ConvStemRowsFn rows_fn, const ConvShape& cs, int64_t n, int64_t c0, int64_t c1,
                              const float* x, const float* w, const float* bias, const ConvActivation& act,
                              float* out, float* in, float* ring) {
    if (c1 <= c0) return;
    int64_t i0, i1;
    conv_input_rows(cs, c0, c1, &i0, &i1);
    const int64_t C = cs.in_channels, H = cs.in[1], W = cs.in[2], rows_in = i1 - i0;
    for (int64_t c = 0; c < C; ++c)
        std::memcpy(in + c * rows_in * W, x + ((n * C + c) * H + i0) * W, static_cast<size_t>(rows_in * W) * sizeof(float));
    ConvShape sub = cs;
    sub.batch = 1;
    sub.in[1] = rows_in;
    sub.out[1] = c1 - c0;
    sub.pad[1] = i0 - (c0 * cs.stride[1] - cs.pad[1]);  // >= 0: the padding above the band's first row
    rows_fn(sub, in, w, bias, act, out, ring, 0, c1 - c0);
}

}  // namespace flexpipe
