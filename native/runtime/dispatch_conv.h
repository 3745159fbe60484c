// SPDX-License-Identifier: Apache-2.0
// The conv part of the kernel table: which variant of each conv kernel runs on this CPU.
//
// Winograd transforms and the tile GEMM, depthwise 3x3, the direct convolution (also used for grouped
// convolutions other than depthwise 3x3, and 3-D ones) and im2col; im2col's GEMM and the 1x1 GEMM go
// through the GEMM family's table.
#pragma once

#include "kernels/conv/conv.h"
#include "kernels/depthwise/depthwise.h"
#include "kernels/im2col/im2col.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "kernels/winograd/winograd.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

struct WinogradTransforms {
    WinogradInputFn input = nullptr;
    WinogradOutputFn output = nullptr;
    WinogradFilterPanelFn filter_panel = nullptr;  // the lean kernels' run-time filter transform
};

struct ConvKernels {
    ConvFn direct = conv_f32__ref;
    WinogradTransforms f63;
    WinogradTransforms f23;
    WinogradGemmFn winograd_gemm = winograd_f32_6x16__ref;
    DepthwiseFn depthwise_3x3 = depthwise_f32_3x3__ref;
    Im2colFn im2col = im2col_f32__ref;
    ConvStemRowsFn stem_rows = conv_stem_rows_f32__ref;
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_conv_kernels(ConvKernels* t, Isa isa);

}  // namespace flexpipe
