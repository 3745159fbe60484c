// SPDX-License-Identifier: Apache-2.0
// ConvTranspose as a GEMM and a col2im scatter (the fast path; kernels/conv's
// conv_transpose_f32__ref is the reference).
//
// Shape: ConvShape with in = X's spatial dims, out = Y's, in_channels = C, out_channels = M; W is
// [C, M/group, kernel...]; pad holds the begin pads, so input position i and tap k land on output
// position i * stride - pad + k * dilation (positions outside Y are dropped).
//
// Per image, group and slice of input rows (a row: one (depth, height) line of X, in[2] pixels):
//   cols[(m, k), q] = sum_c W[c, m, k] * X[c, q]   (m < M/group, k < kvol, q in the slice)
// on the packed GEMM driver, which reads W's columns and X's rows where they are (no copy), and then
//   Y[m, o(q, k)] += cols[(m, k), q]
// over output channels in parallel, after Y was set to the bias. Input slices (FlexNN) bound the
// column buffer: `slices` cuts the input rows into that many bands (rows per band rounded up).
// Workspace: conv_transpose_workspace_bytes (64-byte slack, the column buffer of the largest band,
// then the GEMM's workspace for `threads`); lib/model/ops/conv-cost.ts convTransposeWorkspaceBytes is the
// same formula. Numerics: the GEMM's (cin_g products per column) plus one add per tap reaching an
// output; the order of the adds differs from the reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "kernels/conv/conv.h"
#include "runtime/dispatch.h"

namespace flexpipe {

struct ConvTransposeBands {
    int64_t rows = 0;       // input rows of one image: in[0] * in[1]
    int64_t band_rows = 0;  // rows per band (the last band may have fewer)
    int64_t band_pixels = 0;
    int64_t col_rows = 0;   // (M / group) * kvol: rows of the column buffer
};

ConvTransposeBands conv_transpose_bands(const ConvShape& s, int64_t slices);

size_t conv_transpose_workspace_bytes(const GemmKernels& g, const ConvShape& s, int64_t slices, int threads);

// y [N, M, out...] = ConvTranspose(x, w) + bias (bias may be null). Fails when the workspace does not
// hold one thread's share (conv_transpose_workspace_bytes(g, s, slices, 1)).
Status conv_transpose_gemm(const GemmKernels& g, const ConvShape& s, const float* x, const float* w,
                           const float* bias, float* y, void* workspace, size_t ws_bytes, int64_t slices,
                           int threads);

}  // namespace flexpipe
