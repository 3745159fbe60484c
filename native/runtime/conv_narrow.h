// SPDX-License-Identifier: Apache-2.0
// Convolution by the narrow GEMM (runtime/gemm_narrow.h): for small output planes, where output
// channels outnumber output pixels (ResNet's 7x7 and 14x14 stages, SqueezeNet's 13x13 fire modules).
//
// W arrives prepacked by conv_narrow_filter (runtime/ops/conv_prepack.cc) as ceil(M / 16) panels
// [K][16], K = C * kernel volume (group 1 only). Per image and slice of S output pixels [p0, p0 + S):
// B is the input itself for a 1x1, stride 1, unpadded convolution (rows a plane apart), else the
// slice's im2col columns as a plain row-major K x S matrix in the workspace (threads split its rows);
// then one gemm_narrow_run writes Y[:, p0:p0+S] with bias, fused residual and clamp in its epilogue.
// Workspace (conv_cost): 64 + (B in place ? 0 : round_up(4 K S, 64)) + gemm_narrow_workspace_bytes(S).
#pragma once

#include <cstddef>

#include "common/status.h"
#include "kernels/im2col/im2col.h"
#include "runtime/conv_winograd.h"
#include "runtime/dispatch_gemm.h"

namespace flexpipe {

// s must satisfy conv_algo_applies(narrow, s); ws_bytes >= conv_cost(narrow, ..., 1 thread).
Status conv_narrow(const GemmKernels& g, Im2colFn im2col, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
