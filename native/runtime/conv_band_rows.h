// SPDX-License-Identifier: Apache-2.0
// What the fused ops computed in bands of rows share (ConvMaxPool, conv_pool.h; ConvDepthwise,
// conv_depthwise.h): the band buffer size they aim at, and running a convolution by rows on one band
// of its output rows, its input rows copied out as an image of their own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/conv/conv.h"
#include "kernels/conv_stem/conv_stem_rows.h"

namespace flexpipe {

// Band buffer size the band heights aim at: about half of a 1-2 MiB L2, so the second layer reads what
// the first just wrote from L2.
constexpr int64_t band_buffer_target = 512 * 1024;

inline int64_t round_up64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Rows [a0, a1) of a layer of `rows` rows that a window of `extent` rows (stride, padding `pad` above)
// reads for its output rows [r0, r1).
inline void window_span(int64_t r0, int64_t r1, int64_t stride, int64_t pad, int64_t extent, int64_t rows,
                        int64_t* a0, int64_t* a1) {
    *a0 = std::max<int64_t>(0, r0 * stride - pad);
    *a1 = std::min<int64_t>(rows, (r1 - 1) * stride - pad + extent);
    if (*a1 < *a0) *a1 = *a0;
}

// Input rows [i0, i1) that output rows [c0, c1) of convolution cs read.
inline void conv_input_rows(const ConvShape& cs, int64_t c0, int64_t c1, int64_t* i0, int64_t* i1) {
    window_span(c0, c1, cs.stride[1], cs.pad[1], cs.kernel[1], cs.in[1], i0, i1);
}

// The bands of a fused op: convolution cs, then a second layer whose window (`extent` rows, `stride`)
// reads cs's output rows and writes `oh` rows per image.
struct FusedBands {
    int64_t out_rows = 1;  // second layer's output rows per band (the last band may have fewer)
    int64_t bands = 1;     // per image
    int64_t mid_rows = 1;  // rows of cs's output one band computes, at most
    int64_t in_rows = 1;   // input rows those rows read, at most
};

// Bands whose rows of cs's output fill about band_buffer_target bytes, their count rounded up to an
// even number (two threads split them evenly); independent of the thread count.
inline FusedBands fused_bands(const ConvShape& cs, int64_t oh, int64_t stride, int64_t extent) {
    FusedBands b;
    const int64_t row_bytes = 4 * cs.out_channels * cs.out[2];
    const int64_t target_rows = std::max<int64_t>(extent, band_buffer_target / std::max<int64_t>(1, row_bytes));
    const int64_t per = std::max<int64_t>(1, (target_rows - extent) / stride + 1);
    b.bands = (oh + per - 1) / per;
    if (b.bands > 1 && b.bands % 2 == 1) ++b.bands;
    b.out_rows = (oh + b.bands - 1) / b.bands;
    b.bands = (oh + b.out_rows - 1) / b.out_rows;
    b.mid_rows = std::min(cs.out[1], (b.out_rows - 1) * stride + extent);
    b.in_rows = std::min(cs.in[1], (b.mid_rows - 1) * cs.stride[1] + cs.kernel[1]);
    return b;
}

// The most threads, at most `threads`, whose workspace bytes(t) fits in ws_bytes; 0 if one does not.
template <class Bytes>
int fused_threads(int threads, const void* ws, size_t ws_bytes, Bytes&& bytes) {
    int t = std::max(threads, 1);
    while (t > 1 && bytes(t) > static_cast<int64_t>(ws_bytes)) --t;
    return ws != nullptr && bytes(t) <= static_cast<int64_t>(ws_bytes) ? t : 0;
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
