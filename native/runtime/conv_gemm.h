// SPDX-License-Identifier: Apache-2.0
// Convolution as GEMM: im2col + GEMM with input slices, and 1x1 convolution as a plain GEMM.
//
// Per image, group and slice of S output pixels [p0, p0 + S) (S from im2col_geometry):
//   im2col:  the slice's column matrix (K x S) is built in the workspace directly in the GEMM's packed-B
//            panel layout (threads split its rows), then one gemm_run writes Y[group rows, p0:p0+S]
//            = W_group (Mg x K) · col. Peak extra memory: one slice of columns, never the whole matrix.
//   gemm1x1: B is the input itself (C/group x pixels, row stride = plane); gemm_run packs the slice's
//            columns into its workspace. No column buffer.
// Bias is per output row (channel), so it is written into Y first and the GEMM accumulates (beta = 1);
// the activation is the GEMM's fused clamp. Threads are split inside gemm_run (runtime/gemm_driver.h).
#pragma once

#include <cstddef>

#include "common/status.h"
#include "kernels/im2col/im2col.h"
#include "runtime/conv_winograd.h"
#include "runtime/dispatch_gemm.h"

namespace flexpipe {

// s must satisfy conv_algo_applies(im2col / gemm1x1, s); ws_bytes >= conv_cost(..., 1 thread).
Status conv_im2col(const GemmKernels& g, Im2colFn im2col, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);
Status conv_gemm1x1(const GemmKernels& g, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
