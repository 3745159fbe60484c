// SPDX-License-Identifier: Apache-2.0
// The stem convolution computed by rows: convolutions with few input channels (network stems: 3 -> 16..64
// channels, 3x3 or 7x7, stride 2), one output row of every output channel at a time. (Not FlexNN's
// input slicing, which is im2col's: kernels/im2col/im2col.h.) Their im2col matrix has only K = C * KH * KW
// rows (27 for a 3x3 stem), so a GEMM over it spends its time on packing and on C-tile traffic, not on
// multiply-adds. Here the column matrix is never built: for each output row, the im2col row (c, kh, kw)
// is a contiguous run of a de-interleaved input row, and the kernel multiplies those runs in registers.
//
// Input rows: the input row ih of channel c is split by column phase q < sw into
//     phase(c, ih, q)[j] = x[c, ih, j * sw + q - pw]        (0 outside the image, and for rows outside it)
// so that, for output row oh and kh, kw with ih = oh * sh - ph + kh,
//     x[c, ih, ow * sw - pw + kw] = phase(c, ih, kw % sw)[ow + kw / sw]
// a unit-stride run over ow: one vector load per 8 (AVX2) or 4 (NEON) output columns, no permutes, no
// borders. Each thread keeps a ring of KH de-interleaved rows per channel and advances it by sh rows per
// output row, so every input row is split once per thread (the ring and the row driver the variants
// share are in conv_stem_rows_impl.h).
//
// Then, per output row and block of output channels, y[m, oh, ow] = act(bias[m] + sum over (c, kh, kw)
// of w[m, c, kh, kw] * phase(...)[...]) in the order c, kh, kw (weights read in place, ONNX layout).
// Applies to 2-D convolutions with groups 1 and dilation 1 (stem_applies); work items are output rows
// (n, oh) of all output channels. Tolerance: the variants sum in the same order as __ref with FMA.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {

struct StemGeometry {
    int64_t panel = 0;   // floats per phase row: >= round_up(OW, 8) + (KW - 1) / sw, a multiple of 8
    int64_t ring = 0;    // rows kept per channel (KH)
    int64_t floats = 0;  // per-thread ring floats: C * ring * sw * panel
};

constexpr int64_t stem_max_kernel = 16;

static inline bool stem_applies(const ConvShape& s) {
    return s.groups == 1 && s.kernel[0] == 1 && s.in[0] == 1 && s.out[0] == 1 && s.dilation[1] == 1 &&
           s.dilation[2] == 1 && s.in_channels <= 4 && s.kernel[1] <= stem_max_kernel &&
           s.kernel[2] <= stem_max_kernel && s.stride[2] <= 4;
}

static inline StemGeometry stem_geometry(const ConvShape& s) {
    StemGeometry g;
    const int64_t ow8 = (s.out[2] + 7) / 8 * 8;
    g.panel = (ow8 + (s.kernel[2] - 1) / s.stride[2] + 7) / 8 * 8;
    g.ring = s.kernel[1];
    g.floats = s.in_channels * g.ring * s.stride[2] * g.panel;
    return g;
}

// Output rows [row_begin, row_end) of batch * OH rows, every output channel; ring: StemGeometry::floats.
using ConvStemRowsFn = void (*)(const ConvShape& s, const float* x, const float* w, const float* bias,
                                const ConvActivation& act, float* y, float* ring, int64_t row_begin,
                                int64_t row_end);
void conv_stem_rows_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias,
                             const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
#if defined(__x86_64__) || defined(_M_X64)
void conv_stem_rows_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias,
                              const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
void conv_stem_rows_f32__avx512(const ConvShape& s, const float* x, const float* w, const float* bias,
                                const ConvActivation& act, float* y, float* ring, int64_t row_begin,
                                int64_t row_end);
#endif
#if defined(__aarch64__)
void conv_stem_rows_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias,
                              const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
#endif

}  // namespace flexpipe
