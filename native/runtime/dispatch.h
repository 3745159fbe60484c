// SPDX-License-Identifier: Apache-2.0
// KernelTable: the variant of every kernel family for this CPU, chosen once (STYLE.md §3).
//
// One table, one part per family. Every entry defaults to its __ref kernel; kernels_for(isa) then writes
// the variants of that ISA over the defaults, each ISA's list written once in dispatch.cc (AVX-512 is
// AVX2's list with its own kernels on top: families without an AVX-512 variant run AVX2's). Every entry
// has its __ref's signature and contract; SIMD variants fall back to __ref themselves where they do not
// vectorize (strided softmax, uncommon unary or binary ops), so callers always call through the table.
// kernels() builds the table on first use from selected_isa(), which honours FLEXPIPE_ISA, and never
// changes it; kernels_for(isa) builds it for any ISA the CPU supports, so tests compare every variant
// with __ref.
#pragma once

#include <cstdint>

#include "kernels/attention/attention.h"
#include "kernels/conv/conv.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "kernels/depthwise/depthwise.h"
#include "kernels/dequant/dequant.h"
#include "kernels/eltwise/eltwise.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/narrow.h"
#include "kernels/grouped/grouped.h"
#include "kernels/im2col/im2col.h"
#include "kernels/norm/norm.h"
#include "kernels/pool/pool.h"
#include "kernels/resize/resize.h"
#include "kernels/softmax/softmax.h"
#include "kernels/winograd/winograd.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

// The packed-panel GEMM: micro-kernel and A packer of tile mr x nr, and the cache blocking the driver
// (runtime/gemm_driver.h) uses with them. Blocking (BLIS loop order, see gemm_driver.cc): a kc x nr
// micro-panel of packed B is reused by the micro-kernel across the mc rows of the packed A block (mc x
// kc, kept in L2), from L1 or streamed from L2; nc bounds the columns swept per packed A block. Values
// per ISA are in dispatch.cc with their reasons.
struct GemmKernels {
    GemmUkernelFn f32 = gemm_f32_4x8__ref;   // packed micro-kernel, tile mr x nr
    GemmPackAFn f32_pack_a = gemm_pack_a_f32__ref;
    // ref, 4x8: kc 256 keeps the 8 KiB B micro-panel in any L1; mc 128 gives a 128 KiB A block.
    int32_t mr = 4, nr = 8;
    int32_t mc = 128, kc = 256, nc = 4096;  // mc multiple of mr, nc multiple of nr
    int32_t tile_panels = 1;                // B panels one micro-kernel call may span (gemm.h: b_next)
    GemmDotFn f32_dot = gemm_f32_dot__ref;  // row dots for a narrow right edge
    // Narrow GEMM (kernels/gemm/narrow.h, runtime/gemm_narrow.h): its micro-kernel, the 16-row panels and
    // the columns one call takes at most; its epilogue (a transposing store).
    GemmNarrowFn f32_narrow = gemm_f32_narrow__ref;
    int32_t narrow_panels = 1, narrow_cols = 4;
    GemmNarrowStoreFn f32_narrow_store = gemm_f32_narrow_store__ref;
};

struct WinogradTransforms {
    WinogradInputFn input = nullptr;
    WinogradOutputFn output = nullptr;
    WinogradFilterPanelFn filter_panel = nullptr;  // the lean kernels' run-time filter transform
};

// Convolutions: Winograd transforms and the tile GEMM, depthwise 3x3 and kxk, grouped 2-D, the direct
// convolution (3-D ones, and any shape the others do not take), im2col and the stem convolution by rows; im2col's
// GEMM and the 1x1 GEMM go through the GEMM part.
struct ConvKernels {
    ConvFn direct = conv_f32__ref;
    WinogradTransforms f63{winograd_f32_f63_input__ref, winograd_f32_f63_output__ref,
                           winograd_f32_f63_filter_panel__ref};
    WinogradTransforms f23{winograd_f32_f23_input__ref, winograd_f32_f23_output__ref,
                           winograd_f32_f23_filter_panel__ref};
    WinogradGemmFn winograd_gemm = winograd_f32_6x16__ref;
    DepthwiseFn depthwise_3x3 = depthwise_f32_3x3__ref;
    DepthwiseFn depthwise_kxk = depthwise_f32_kxk__ref;  // any kernel size and dilation (depthwise.h)
    GroupedConvFn grouped = grouped_conv_f32__ref;       // 2-D grouped, not depthwise (grouped.h)
    Im2colFn im2col = im2col_f32__ref;
    ConvStemRowsFn stem_rows = conv_stem_rows_f32__ref;
};

// The transformer's row kernels: fused attention of one head, layer norm rows, softmax rows.
struct AttentionKernels {
    AttentionFn fused = attention_f32__ref;
    LayerNormRowFn layernorm_row = layernorm_row_f32__ref;
    SoftmaxFn softmax = softmax_f32__ref;
};

// The float32 element-wise fast paths: unary (GELU included), binary, Clip.
struct EltwiseKernels {
    UnaryF32Fn unary_f32 = unary_f32__ref;
    BinaryF32Fn binary_f32 = binary_f32__ref;
    ClipF32Fn clip_f32 = clip_f32__ref;
};

// The row micro-kernels of the fast pooling and Resize paths (runtime/pool_run.h, resize_run.h).
struct PoolKernels {
    PoolRowFn vmax = pool_vmax_f32__ref;  // vertical max / sum of one input row into the row buffer
    PoolRowFn vsum = pool_vsum_f32__ref;
    PoolHMaxFn hmax = pool_hmax_f32__ref;  // horizontal window max / scaled sum with the stride
    PoolHSumFn hsum = pool_hsum_f32__ref;
    PoolSumFn sum = pool_sum_f32__ref;  // whole-plane sum / max (global pools)
    PoolMaxFn max = pool_max_f32__ref;
    PoolMax3x3S2Fn max3x3s2 = pool_max3x3s2_f32__ref;  // fused 3x3 stride-2 max of three rows
    ResizeRepFn resize_rep = resize_rep_f32__ref;        // nearest: integer upscale of one row
    ResizeGatherFn resize_gather = resize_gather_f32__ref;  // nearest: one row through an index table
    ResizeLerpFn resize_lerp = resize_lerp_f32__ref;      // linear: horizontal two-tap interpolation
    ResizeBlendFn resize_blend = resize_blend_f32__ref;   // linear: vertical blend of two rows
};

// Dequantization of k-bit cluster indices (kernels/dequant/).
struct QuantKernels {
    DequantF32Fn dequant_f32 = dequant_f32__ref;
};

struct KernelTable {
    Isa isa = Isa::ref;
    GemmKernels gemm;
    ConvKernels conv;
    AttentionKernels attention;
    EltwiseKernels eltwise;
    PoolKernels pool;
    QuantKernels quant;
};

// The table for the selected ISA (thread-safe, filled once).
const KernelTable& kernels();
// A table for a specific ISA; only valid for ISAs this CPU supports (see isa_supported).
KernelTable kernels_for(Isa isa);
// Whether this build and CPU can run kernels of `isa`.
bool isa_supported(Isa isa);

}  // namespace flexpipe
