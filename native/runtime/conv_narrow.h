// SPDX-License-Identifier: Apache-2.0
// Convolution by the narrow GEMM (runtime/gemm_narrow.h): output channels as the vector dimension, for
// layers whose output planes are small (ResNet's 7x7 and 14x14 stages) or whose reductions are short
// (SqueezeNet's 3x3 expand convolutions over 16-64 channels, stems over 3).
//
// W arrives prepacked by conv_narrow_filter (runtime/ops/conv_prepack.cc) as ceil(M / 16) panels
// [K][16], K = C * kernel volume (group 1 only). Per image and slice of S output pixels, B (K rows, the
// slice's pixels as columns) is read through one offset per row, in one of three forms:
//  - in place: a 1x1, stride 1, unpadded convolution reads the input itself (row c at c * plane);
//  - phase planes (2-D convolutions): the implicit im2col. The slice's input rows are copied once,
//    zero-padded and split by stride phase, into planes of Wq = OW + dw (KW - 1) / sw columns (per
//    channel, per phase (ph, pw) some tap uses, R rows: the slice's output rows plus dh (KH - 1) / sh).
//    Input pixel (oh sh + dh kh, ow sw + dw kw) of the padded image is then phase plane
//    ((dh kh) % sh, (dw kw) % sw) at row oh + (dh kh) / sh, column ow + (dw kw) / sw, so every tap
//    (c, kh, kw) is one offset into the planes plus the pixel's virtual column oh Wq + ow. Wq - OW
//    columns per row are computed and dropped (3.5% at 55x55 3x3, 13% at 13x13), which costs less
//    than an im2col buffer K / (C * phases) times larger (9x for a 3x3 stride-1 layer) and its writes;
//  - columns (3-D convolutions): the slice's im2col as a row-major K x S matrix.
// One gemm_narrow_run then writes Y with bias, fused residual and clamp in its epilogue.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "kernels/im2col/im2col.h"
#include "runtime/conv_winograd.h"
#include "runtime/dispatch.h"

namespace flexpipe {

enum class NarrowB { in_place, phases, columns };

struct NarrowGeometry {
    NarrowB b = NarrowB::in_place;
    int64_t k = 0, pixels = 0, slice_pixels = 0;
    // phases: used phases per axis, their slots (phase -> index among the used ones), plane rows and
    // columns (rows for the worst slice).
    int64_t used_h = 1, used_w = 1, slot_h[8] = {}, slot_w[8] = {}, rows = 0, wq = 0;
    int64_t b_floats = 0;  // B buffer per slice (phases or columns), 0 in place
    int64_t max_cols = 0;  // GEMM columns of the widest slice (virtual columns for phases)
};

// How conv_narrow reads B for s with `slices` input slices: in place, phase planes (2-D, strides
// up to 8) or columns.
NarrowGeometry narrow_geometry(const ConvShape& s, int64_t slices);

// Workspace bytes: 64 + round_up(8 K, 64) (the row offsets) + round_up(4 b_floats, 64)
// + gemm_narrow_workspace_bytes(max_cols, threads).
int64_t conv_narrow_workspace_bytes(const ConvShape& s, int64_t slices, int threads);

// s must satisfy conv_algo_applies(narrow, s); ws_bytes >= conv_narrow_workspace_bytes(s, slices, 1).
Status conv_narrow(const GemmKernels& g, Im2colFn im2col, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
