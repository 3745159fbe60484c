// SPDX-License-Identifier: Apache-2.0
// Direct convolution and transposed convolution kernels (NC[D]HW, float32), any stride/dilation/pad.
//
// Layout: x is [batch, in_channels, in[0], in[1], in[2]], y is [batch, out_channels, out[0], out[1],
// out[2]], both dense row-major. 1-D and 2-D convolutions are passed as 3-D with leading unit spatial
// dims (kernel 1, stride 1, dilation 1, pad 0), so one formulation covers every rank.
// Conv weights are [out_channels, in_channels / groups, kernel[0], kernel[1], kernel[2]];
// ConvTranspose weights are [in_channels, out_channels / groups, kernel...] (ONNX layouts).
//
// Conv:  y[n, oc, o] = bias[oc]
//                      + sum_{ic in group(oc), k} x[n, ic, o * stride - pad + k * dilation] * w[oc, ic, k]
//        (taps that fall into the padding read zero).
// ConvTranspose is its adjoint: every x[n, ic, i] is scattered to y[n, oc, i * stride - pad + k * dilation]
// with weight w[ic, oc, k]; positions outside y are dropped.
//
// Work split: conv computes work items of output rows: one item = the (od, oh) line of out[2] values
// of up to conv_oc_block consecutive output channels of one group, so the innermost loop runs over
// contiguous output width (it vectorizes) and every input row loaded feeds conv_oc_block outputs.
// conv_transpose computes whole output planes (n, oc) because its scatter writes anywhere in the
// plane. Callers split these ranges over threads; ranges are disjoint in y, so no synchronization.
// Variants (conv_f32__avx2/neon) keep the work items but accumulate blocks of 16/8 (avx2) or 8/4 (neon)
// output columns over every (input channel, tap) in registers with FMA and store them once; border
// columns are summed one by one, and rows without a full block are handed to __ref.
// Tolerance: float accumulation in kernel order; variants must match __ref within
// k * 2^-20 * max |x * w| summed over the reduction length.
#pragma once

#include <cstdint>

#include "common/window.h"

namespace flexpipe {

// The spatial window (common/window.h) and the channels.
struct ConvShape : Window3 {
    int64_t batch = 1;
    int64_t in_channels = 1;
    int64_t out_channels = 1;
    int64_t groups = 1;
};

constexpr int64_t conv_oc_block = 4;

// Activation fused after the bias: y = min(max(y, lo), hi) when clamp is set (Relu: lo = 0, hi = +inf;
// Clip: its bounds). Without clamp values (NaN included) pass through untouched.
struct ConvActivation {
    bool clamp = false;
    float lo = 0.0f;
    float hi = 0.0f;
};

// Number of conv work items: batch * groups * ceil(cout_per_group / conv_oc_block) * out[0] * out[1],
// ordered (n, group, channel block, od, oh).
static inline int64_t conv_work_items(const ConvShape& s) {
    const int64_t cout_g = s.out_channels / s.groups;
    return s.batch * s.groups * ((cout_g + conv_oc_block - 1) / conv_oc_block) * s.out[0] * s.out[1];
}

// Work item `item` of a convolution (see conv_work_items): image n, group g, the block of nb <= conv_oc_block
// output channels from oc0, output row (od, oh).
struct ConvItem {
    int64_t n, g, oc0, od, oh;
    int nb;
};
static inline ConvItem conv_item(const ConvShape& s, int64_t item) {
    const int64_t cout_g = s.out_channels / s.groups;
    const int64_t blocks = (cout_g + conv_oc_block - 1) / conv_oc_block;
    ConvItem it;
    it.oh = item % s.out[1];
    it.od = (item / s.out[1]) % s.out[0];
    const int64_t blk = (item / (s.out[1] * s.out[0])) % blocks;
    it.g = (item / (s.out[1] * s.out[0] * blocks)) % s.groups;
    it.n = item / (s.out[1] * s.out[0] * blocks * s.groups);
    it.oc0 = it.g * cout_g + blk * conv_oc_block;
    const int64_t left = cout_g - blk * conv_oc_block;
    it.nb = static_cast<int>(left < conv_oc_block ? left : conv_oc_block);
    return it;
}

// The indices o in [0, out) with 0 <= o * stride + off < in, as [lo, hi) (empty: lo == hi): the
// output columns a tap reaches inside the input (convolution), or the input columns whose tap lands
// inside the output (transposed convolution, with in and out swapped).
static inline void conv_valid_range(int64_t off, int64_t stride, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
    const int64_t first = off >= 0 ? 0 : (-off + stride - 1) / stride;
    const int64_t last = in - 1 - off < 0 ? -1 : (in - 1 - off) / stride;  // floor, argument >= 0
    *lo = first < out ? first : out;
    *hi = last + 1 < out ? last + 1 : out;
    if (*hi < *lo) *hi = *lo;
}

// Work items [item_begin, item_end) (see conv_work_items). bias may be null.
using ConvFn = void (*)(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                        int64_t item_begin, int64_t item_end);
void conv_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                   int64_t item_begin, int64_t item_end);
#if defined(__x86_64__) || defined(_M_X64)
void conv_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    int64_t item_begin, int64_t item_end);
#endif
#if defined(__aarch64__)
void conv_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    int64_t item_begin, int64_t item_end);
#endif

// Output planes [plane_begin, plane_end) of batch * out_channels planes. bias may be null.
void conv_transpose_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                             int64_t plane_begin, int64_t plane_end);

}  // namespace flexpipe
