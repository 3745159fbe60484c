// SPDX-License-Identifier: Apache-2.0
// Grouped 2-D convolution (1 < group, not depthwise), float32: RegNet's and ResNeXt's 3x3 layers of 4 to
// 64 channels per group, ShuffleNet v1's grouped 1x1, any kernel size, stride 1 or 2, dilation, padding.
//
// Layout: x [batch, groups * cg, h, w], y [batch, groups * mg, oh, ow], bias [groups * mg] or null, and the
// filter packed by grouped_pack_filter (the prepack grouped_filter): wp [groups][K][mg], K = cg * kh * kw,
// from the ONNX w [groups * mg, cg, kh, kw] (a tap's mg weights are neighbours). Both axes share the
// stride and the dilation.
//   y[n, g mg + m, oy, ox] = bias + sum_{c < cg, ky < kh, kx < kw} w[g mg + m, c, ky, kx] *
//                            x[n, g cg + c, oy s - pad_top + ky d, ox s - pad_left + kx d]
// (taps in the padding read zero), then the fused clamp.
//
// Work items are (image, group, band of grouped_geometry's band_rows output rows), item i = (n * groups
// + g) * bands + band; callers split [0, batch * groups * bands) into ranges over threads and hand each
// thread its own scratch of grouped_geometry().scratch_floats floats (64-byte aligned), whose contents
// need not survive between calls. The SIMD variants (grouped_impl.h, one template over simd/vec.h) copy
// the band's input rows of the group's cg channels into the scratch, zero-padded, then either
// vectorize along the output row (pixel steps; stride 2 copies even and odd columns apart): a step
// keeps MT output channels x NV vectors of output columns in registers and adds the K taps, each one
// vector load per column vector (at an offset from a table of K) and MT broadcast weights; or, with
// whole vectors of channels per group and rows that are not whole vectors (RegNet's 16 channels per
// group at 7x7 to 56x56), put L output channels in the lanes and step over the band's pixels
// (channel steps, grouped_channels_apply). Per-group GEMMs (im2col) pay a tile of mr rows for mg
// channels, and a parallel region per group; this has neither. __ref computes each output as above
// (its scratch unused).
// Tolerance: K products summed in another order (one FMA chain per output): within
// 2 * K * 2^-24 * (sum |x * w| + |bias|) of __ref.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {

struct GroupedShape {
    int64_t groups = 1;
    int64_t cg = 1, mg = 1;  // input and output channels per group
    int64_t h = 1, w = 1;    // input plane
    int64_t oh = 1, ow = 1;  // output plane
    int64_t kh = 1, kw = 1;
    int64_t stride = 1;      // 1 or 2, both axes
    int64_t dilation = 1;    // both axes
    int64_t pad_top = 0, pad_left = 0;
};

// How the work and the scratch are cut (the same for every ISA: columns are sized for 16 lanes).
// The scratch holds the taps' input offsets (K int64, offset_floats floats), the band's input rows
// (cg * in_rows rows of cols floats; stride 2 stores each row's even columns, then its odd ones, in two
// halves of cols / 2) and one row of cols floats the stride-2 copy goes through.
struct GroupedGeometry {
    int64_t band_rows = 1;       // output rows per work item
    int64_t bands = 1;           // per (image, group)
    int64_t in_rows = 1;         // input rows a band reads, per channel
    int64_t cols = 16;           // floats per scratch row (padded input column q = input column q - pad_left)
    int64_t offset_floats = 0;   // 2 * K rounded up to 16
    int64_t scratch_floats = 0;  // per thread: offset_floats + (cg * in_rows + 1) * cols
};

constexpr int64_t grouped_max_lanes = 16;
constexpr int64_t grouped_scratch_target = 16384;  // floats (64 KiB) of input rows per band
constexpr int64_t grouped_min_items = 8;           // bands per image are cut so that threads share work

inline GroupedGeometry grouped_geometry(const GroupedShape& s) {
    GroupedGeometry g;
    const int64_t span_h = (s.kh - 1) * s.dilation + 1, span_w = (s.kw - 1) * s.dilation + 1;
    // The last step's last lane is output column max(ow, lanes) - 1.
    const int64_t widest = (s.ow > grouped_max_lanes ? s.ow : grouped_max_lanes) - 1, copied = s.pad_left + s.w;
    if (s.stride == 1) {
        const int64_t need = widest + span_w;
        g.cols = ((need > copied ? need : copied) + 15) / 16 * 16;
    } else {  // halves: tap kx reads index ox + (kx d) / 2 of the half of parity (kx d) % 2
        const int64_t need = widest + (span_w - 1) / 2 + 1, half_copied = (copied + 1) / 2;
        g.cols = 2 * (((need > half_copied ? need : half_copied) + 15) / 16 * 16);
    }
    const int64_t fit = grouped_scratch_target / (s.cg * g.cols);
    int64_t rows = fit > span_h ? (fit - span_h) / s.stride + 1 : 1;
    const int64_t planes = s.groups < 1 ? 1 : s.groups;  // per image; batch only adds items
    if (planes < grouped_min_items) {
        int64_t want = (grouped_min_items + planes - 1) / planes;
        if (want > s.oh) want = s.oh;
        const int64_t cap = (s.oh + want - 1) / want;
        if (rows > cap) rows = cap;
    }
    if (rows > s.oh) rows = s.oh;
    if (rows < 1) rows = 1;
    g.band_rows = rows;
    g.bands = (s.oh + rows - 1) / rows;
    g.in_rows = (rows - 1) * s.stride + span_h;
    g.offset_floats = (2 * s.cg * s.kh * s.kw + 15) / 16 * 16;
    g.scratch_floats = g.offset_floats + (s.cg * g.in_rows + 1) * g.cols;
    return g;
}

// w [groups * mg, cg, kh, kw] -> wp [groups][k = cg * kh * kw][mg] (ISA-independent).
inline void grouped_pack_filter(const float* w, int64_t groups, int64_t mg, int64_t k, float* wp) {
    for (int64_t g = 0; g < groups; ++g)
        for (int64_t m = 0; m < mg; ++m)
            for (int64_t i = 0; i < k; ++i) wp[(g * k + i) * mg + m] = w[(g * mg + m) * k + i];
}

using GroupedConvFn = void (*)(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                               const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end);

void grouped_conv_f32__ref(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                           const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end);
#if defined(__x86_64__) || defined(_M_X64)
void grouped_conv_f32__avx2(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end);
void grouped_conv_f32__avx512(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                              const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end);
#endif
#if defined(__aarch64__)
void grouped_conv_f32__neon(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end);
#endif

}  // namespace flexpipe
