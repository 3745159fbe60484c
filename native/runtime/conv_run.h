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
// args.threads, k.gemm).workspace_bytes; args.w is the transformed filter for Winograd.
Status conv_run(const KernelTable& k, ConvAlgo a, const ConvShape& s, const ConvArgs& args, size_t ws_bytes);

}  // namespace flexpipe
