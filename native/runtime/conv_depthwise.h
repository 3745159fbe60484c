// SPDX-License-Identifier: Apache-2.0
// A convolution and the depthwise 3x3 convolution that alone reads its output, computed together in
// bands of depthwise output rows: MobileNetV2's inverted-residual expansion (a pointwise 1x1 to t x the
// channels) with its depthwise, and its stem (3x3 stride 2 over RGB) with the first depthwise. The
// middle tensor, the largest activation of these networks (96 x 112 x 112 floats, 4.8 MB, beside the
// depthwise's own 1.2 MB output), never exists whole: each band computes only the middle rows its
// depthwise windows read, into a per-thread buffer, then convolves them into Y. FlexNN slices one
// layer's input; this carries the slicing across two layers, as ConvMaxPool (conv_pool.h) does for
// a stem and its pool.
//
// Per band of depthwise output rows [r0, r1) of one image:
//   middle rows [m0, m1) = [max(0, r0 ds - pad_top), min(MH, (r1 - 1) ds - pad_top + 3))
//   pointwise (1x1, stride 1, no padding, groups 1): one GEMM Mid[:, m0 MW .. m1 MW) = W1 [M, C] .
//     X[n, :, m0 W .. m1 W), reading W1 and X's rows in place (a band of rows of a channel is
//     contiguous), bias and activation in its epilogue;
//   by rows (stem_applies: <= 4 input channels): input rows [i0, i1) = [max(0, m0 s - pad), min(H,
//     (m1 - 1) s - pad + KH)) copied into a [C][i1 - i0][W] buffer and convolved by conv_stem_rows as an
//     image of their own (the first band keeps the top padding);
// then one depthwise_3x3 over the band's m1 - m0 middle rows of every channel as planes of their own
// (the first band keeps the top padding, rows past the tensor read zero), writing rows [r0, r1) of Y's
// planes (DepthwiseShape::y_plane = OH OW).
// Neighbouring bands recompute the middle rows their windows share (one at stride 2, two at stride 1).
// Both steps run the unfused ops' kernels on the same rows, so Y equals Depthwise(Conv(X)) within the
// GEMM's and the depthwise kernels' tolerances (the GEMM's column grouping differs by band).
//
// Work items are (image, band); each thread owns its GEMM workspace (or ring and input rows) and band
// buffer in the workspace. Bands are sized for a band buffer of about 512 KiB (half an L2), their count
// rounded up to an even number so two threads split them evenly; none of it depends on the thread
// count, so a workspace sized for T threads serves any smaller team.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "kernels/conv/conv.h"
#include "kernels/depthwise/depthwise.h"
#include "runtime/conv_band_rows.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// Whether the fused path computes conv cs (X -> Mid) followed by depthwise ds (Mid -> Y): cs is
// pointwise or runs by rows, ds is a depthwise 3x3 over cs's output (channels, rows and columns).
bool conv_depthwise_applies(const ConvShape& cs, const DepthwiseShape& ds);
// Whether cs is the pointwise form (a 1x1 GEMM) rather than the by-rows one.
bool conv_depthwise_pointwise(const ConvShape& cs);
// Bands of depthwise output rows (out_rows) over middle rows (mid_rows).
FusedBands conv_depthwise_bands(const ConvShape& cs, const DepthwiseShape& ds);
// Workspace of conv_depthwise_run for `threads` threads: 64 bytes of alignment slack, then per thread
// the pointwise GEMM's one-thread workspace (or the by-rows ring and input rows) and the band buffer,
// each 64-byte aligned.
int64_t conv_depthwise_workspace_bytes(const KernelTable& k, const ConvShape& cs, const DepthwiseShape& ds,
                                       int threads);

// The two convolutions' weights, biases (may be null) and fused activations.
struct ConvDepthwiseArgs {
    const float* x = nullptr;   // [N, C, H, W]
    const float* w1 = nullptr;  // [M, C, KH, KW]
    const float* b1 = nullptr;  // [M]
    ConvActivation act1;
    const float* w2 = nullptr;  // [M, 1, 3, 3]
    const float* b2 = nullptr;  // [M]
    ConvActivation act2;
    float* y = nullptr;         // [N, M, OH, OW]
};

// Y = act2(Depthwise(act1(Conv(X) + b1)) + b2). Uses min(threads, what the workspace holds) threads;
// an error when it holds none or the shapes do not apply.
Status conv_depthwise_run(const KernelTable& k, const ConvShape& cs, const DepthwiseShape& ds,
                          const ConvDepthwiseArgs& args, void* ws, size_t ws_bytes, int threads);

}  // namespace flexpipe
