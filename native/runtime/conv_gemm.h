// SPDX-License-Identifier: Apache-2.0
// Convolution as GEMM: im2col + GEMM with input slices, and 1x1 convolution as a plain GEMM.
//
// Per image, group and slice of S output pixels [p0, p0 + S) (S from im2col_geometry):
//   im2col:  the slice's column matrix (K x S) is built in the workspace directly in the GEMM's packed-B
//            panel layout (threads split its rows), then one gemm_run writes Y[group rows, p0:p0+S]
//            = W_group (Mg x K) · col. Peak extra memory: one slice of columns, never the whole matrix.
//   gemm1x1: B is the input itself (C/group x pixels, row stride = plane); gemm_run packs the slice's
//            columns into its workspace. No column buffer.
//   im2col with at most 4 input channels (stems): the stem convolution by rows
//            (kernels/conv_stem/conv_stem_rows.h) when the workspace holds one ring of input rows per
//            thread (else as above): no column matrix, no GEMM; the workspace model (conv_cost) is
//            unchanged.
// Bias is the GEMM's per-row bias and the activation its fused clamp, both in the epilogue. Threads are
// split inside gemm_run (runtime/gemm_driver.h), and over output rows for the stem convolution by rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "kernels/im2col/im2col.h"
#include "runtime/conv_winograd.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// Below this many column floats per slice, a parallel region costs more than building the columns
// (im2col + GEMM and the narrow GEMM build them on one thread then).
constexpr int64_t im2col_parallel_min_floats = 32 * 1024;

// s must satisfy conv_algo_applies(im2col / gemm1x1, s); ws_bytes >= conv_cost(..., 1 thread).
Status conv_im2col(const GemmKernels& g, Im2colFn im2col, ConvStemRowsFn rows, const ConvShape& s, const ConvArgs& args,
                   size_t ws_bytes);
Status conv_gemm1x1(const GemmKernels& g, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
