// SPDX-License-Identifier: Apache-2.0
// Runs one convolution with a chosen algorithm and kernel table: the one entry point of the Conv op
// and of the conv tests, so both exercise the same code.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_winograd.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// a must apply to s (conv_algo_applies); args.workspace holds ws_bytes >= conv_cost(a, s, args.slices,
// args.threads, k.gemm).workspace_bytes; args.w is the transformed filter for Winograd and
// the panels of conv_narrow_filter for narrow.
// args.residual: the GEMM algorithms (im2col + GEMM, gemm1x1, narrow) add it in the GEMM's epilogue, while the
// output tile is in registers; the others (Winograd, depthwise, direct, stem by rows) compute y
// without the activation, then one pass y = act(y + R).
Status conv_run(const KernelTable& k, ConvAlgo a, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

// y = act(y + args.residual) over the whole output, on args.threads.
void conv_add_residual(const ConvShape& s, const ConvArgs& args);

// y = clamp(y) in place over the whole output when args.act clamps (for algorithms without an epilogue:
// direct, taps); NaN stays NaN.
void conv_clamp_output(const ConvShape& s, const ConvArgs& args);

}  // namespace flexpipe
