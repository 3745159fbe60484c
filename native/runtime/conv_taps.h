// SPDX-License-Identifier: Apache-2.0
// Convolution tap by tap (ConvAlgo::taps): y = bias + sum over kernel taps t of W_t · (the input shifted
// by t), each tap's product computed only over the rectangle of outputs that read inside the input.
// For a convolution whose taps mostly read padding (DeepLabV3's ASPP at dilation 12 on a 14x14 map:
// 324 tap-pixels of 1,764 read the input) this does the products that are not zero, where im2col + GEMM
// does all of them and the narrow GEMM's phase planes more (their rows and columns span the dilation).
//
// 2-D, group 1, any stride, dilation and padding. W arrives as [KH * KW][M][C] (the prepack
// conv_taps_filter: each tap's M x C matrix). Per tap: its output rectangle [oy0, oy1) x [ox0, ox1); a
// rectangle covering whole output rows whose input is the plane itself (stride 1, input and output
// widths equal, the tap reading column ox at ox) multiplies the input in place and accumulates into y
// (beta 1); any other copies its input pixels into B [C][R] (R pixels), multiplies into T [M][R] and adds
// T into y's rectangle. Then the clamp. y's bias first.
//
// Workspace (conv_taps_workspace_bytes): 64 + round_up(4 C Rmax, 64) + round_up(4 M Rmax, 64) + the
// GEMM's workspace for M x Rmax (or the whole plane, when it runs in place) with K = C, Rmax the largest
// copied rectangle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_run.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// The outputs [o0, o1) of one axis whose tap at offset k * dilation reads inside an input of `in`.
void conv_tap_span(int64_t in, int64_t out, int64_t stride, int64_t dilation, int64_t pad, int64_t k, int64_t* o0,
                   int64_t* o1);

struct ConvTapsGeometry {
    int64_t tap_pixels = 0;  // sum over taps of their rectangles (the products that are done)
    int64_t copied_max = 0;  // the largest rectangle that is copied (0: none)
    bool in_place = false;   // some tap multiplies the whole plane in place
};
ConvTapsGeometry conv_taps_geometry(const ConvShape& s);

// W [M, C, taps] (a raw filter, or one cut to a window) -> wt [taps][M][C]: the prepack conv_taps_filter.
void conv_taps_pack_filter(const float* w, int64_t M, int64_t C, int64_t taps, float* wt);

int64_t conv_taps_workspace_bytes(const GemmKernels& g, const ConvShape& s, int threads);

Status conv_taps(const GemmKernels& g, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
