// SPDX-License-Identifier: Apache-2.0
// Winograd convolution driver: tile blocks, the three stages and their split over threads.
//
// Tiles (N * ceil(OH / m) * ceil(OW / m), numbered image by image, row by row) are processed in blocks of
// `block` tiles (runtime/conv_cost.h: winograd_geometry). Per block:
//   1. input transform of every (tile, group of 8 channels), split over threads, into the shared V;
//   2. per 16-channel output panel: the a² tile GEMMs into the thread's own Mw, then the output transform
//      (+ bias, activation) into y. Items are (panel, range of 6-tile groups); when there are fewer panels
//      than threads the block's tiles are split too, so small layers still use every thread.
// The filter arrives transformed (prepack winograd_f63_filter / winograd_f23_filter), or for the lean
// kernels (winograd63_lean, winograd23_lean) as the narrow GEMM's raw-sized panels (conv_narrow_filter):
// each item then first transforms its panel into the thread's own buffer (filter_panel), so the
// transform runs once per panel and tile block, and panels are split by tiles only when there are
// fewer than threads.
#pragma once

#include <cstdint>

#include "runtime/conv_cost.h"
#include "runtime/dispatch.h"

namespace flexpipe {

struct ConvArgs {
    const float* x = nullptr;
    const float* w = nullptr;     // raw [M, C/group, k...], transformed for Winograd, panels for narrow and lean
    const float* bias = nullptr;  // may be null
    float* y = nullptr;
    ConvActivation act;
    // A residual R laid out as y, added before the activation: y = act(conv + bias + R) (a Conv fused
    // with the Add after it, lib/model/fuse-residual.ts), or null. See conv_run.h for who adds it.
    const float* residual = nullptr;
    void* workspace = nullptr;  // conv_cost(...).workspace_bytes for `threads`
    int64_t slices = 1;
    int threads = 1;
};

// a is winograd63 or winograd23; s must satisfy conv_algo_applies(a, s).
void conv_winograd(const ConvKernels& k, ConvAlgo a, const ConvShape& s, const ConvArgs& args);

}  // namespace flexpipe
