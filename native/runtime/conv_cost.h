// SPDX-License-Identifier: Apache-2.0
// Convolution algorithms, their geometry (tile blocks, input slices) and their cost: workspace bytes,
// FLOPs and weight bytes. The ops size and check workspaces with these functions and the memory
// planner reads the same numbers through lib/model/ops/conv-cost.ts (a line-by-line mirror; a test compares
// the two on random shapes).
//
// Workspace formulas (bytes; P = threads the workspace is sized for):
//   winograd63/23: 64 + 4 * (round_up(V, 16) + P * Mw), V = block * a² * round_up(C, 8) (input transform
//       of one tile block, shared by the threads), Mw = block * a² * 16 (one thread's GEMM output for a
//       16-channel panel); block = min(2304 / a², ceil(tiles / slices)) tiles, tiles = N * ceil(OH / m) *
//       ceil(OW / m). F(6,3): a = 8, m = 6 (block <= 36); F(2,3): a = 4, m = 2 (block <= 144).
//   winograd63_lean/23_lean: as winograd63/23 + 4 * P * a² * C * 16 (each thread's transformed panel).
//   im2col: 64 + 4 * K * round_up(S, nr) + gemm_workspace_bytes(packed B, M / group rows, K, P), with
//       K = C / group * kd * kh * kw and S = ceil(OD * OH * OW / slices) pixels per slice: one slice of the
//       column matrix, written in the GEMM's packed-panel layout (shared by the threads), plus each
//       thread's packed A block and tile (runtime/gemm_driver.h).
//   gemm1x1: gemm_workspace_bytes(raw B of S columns, M / group rows, K = C / group, P): the driver packs
//       the slice of the input itself, so there is no column buffer.
//   narrow: conv_narrow_workspace_bytes (runtime/conv_narrow.h): 64 + round_up(8 * K, 64) (B's row
//       offsets) + round_up(4 * b_floats, 64) (the slice's padded phase planes for a 2-D convolution,
//       about C * phases * (S / OW + 2 + (KH - 1) / sh) * (OW + (KW - 1) / sw) floats; im2col columns
//       K x S for 3-D; nothing for a 1x1, stride 1, unpadded one, read in place) + 64 + T *
//       round_up(4 * 32 * min(columns, 256), 64), each thread's Cᵀ tile. Its weight is the prepacked
//       [ceil(M / 16), K, 16].
//   grouped: 64 + P * round_up(4 * scratch_floats, 64), grouped_geometry (kernels/grouped/grouped.h): the
//       taps' offset table and one band's zero-padded input rows of C / group channels (about 64 KiB) per
//       thread (the filter arrives packed by the prepack grouped_filter).
//   taps: conv_taps_workspace_bytes (runtime/conv_taps.h): 64 + round_up(4 C Rmax, 64) + round_up(4 M Rmax, 64)
//       + the GEMM's workspace, Rmax the largest output rectangle of a tap that is copied.
//   direct, depthwise: 0.
// The GEMM part depends on the ISA's blocking (mr, nr, mc, kc of GemmKernels); the TS mirror takes the
// blocking as a parameter and defaults to an upper bound over every ISA.
// FLOPs count multiply and add separately: 2 * N * M * K * pixels for direct, im2col and gemm1x1
// (taps: 2 * N * M * C * the tap-pixels it computes);
// Winograd adds its transforms as dense matrix products (nonzeros of Bᵀ and Aᵀ, twice per pass) to
// 2 * a² * C * M * tiles; the lean forms add the filter transform (f1d flops of one 1-D pass, 19 for
// F(6,3) and 6 for F(2,3), times 3 + a passes) per output channel (rounded up to 16) and input channel,
// once per tile block.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"
#include "kernels/grouped/grouped.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// winograd63_lean / winograd23_lean: Winograd on the narrow GEMM's raw-sized filter panels, each
// panel's transform computed at run time (FlexNN's streamed layers read 9/16 or 9/64 of the transformed
// filter's bytes, and keep most of Winograd's speed).
enum class ConvAlgo : int {
    direct = 0, im2col = 1, gemm1x1 = 2, winograd63 = 3, winograd23 = 4, depthwise = 5, narrow = 6,
    winograd63_lean = 7, winograd23_lean = 8, grouped = 9, taps = 10
};
constexpr int conv_algo_count = 11;
const char* conv_algo_name(ConvAlgo a);
inline bool is_winograd(ConvAlgo a) {
    return a == ConvAlgo::winograd63 || a == ConvAlgo::winograd23 || a == ConvAlgo::winograd63_lean ||
           a == ConvAlgo::winograd23_lean;
}
inline bool is_winograd_lean(ConvAlgo a) { return a == ConvAlgo::winograd63_lean || a == ConvAlgo::winograd23_lean; }
inline bool is_winograd63(ConvAlgo a) { return a == ConvAlgo::winograd63 || a == ConvAlgo::winograd63_lean; }

struct ConvCost {
    int64_t workspace_bytes = 0;
    int64_t flops = 0;
    int64_t weight_bytes = 0;  // the weight as the kernel reads it (transformed for Winograd)
};

// Whether algorithm a can compute shape s (Winograd: 2-D 3x3, stride 1, dilation 1, group 1; gemm1x1:
// 1x1x1 kernel, stride 1, no padding; depthwise: 2-D 3x3, group == C == M, stride 1 or 2 on both axes,
// dilation 1; narrow: group 1; im2col and direct: everything).
bool conv_algo_applies(ConvAlgo a, const ConvShape& s);

struct WinogradGeometry {
    int alpha = 8;  // a: transformed tile side
    int m = 6;      // output tile side
    int64_t tiles_h = 0, tiles_w = 0, tiles = 0;
    int64_t block = 0;   // tiles per block
    int64_t cv = 0;      // round_up(C, 8): V row length
    int64_t panels = 0;  // ceil(M / 16)
    int64_t v_floats = 0, mw_floats = 0;
};
WinogradGeometry winograd_geometry(ConvAlgo a, const ConvShape& s, int64_t slices);
// Floats of the transformed filter: a² * panels * C * 16 (a = 8 for F(6,3), 4 for F(2,3), lean or not).
int64_t winograd_filter_floats(ConvAlgo a, int64_t M, int64_t C);

struct Im2colGeometry {
    int64_t k = 0;             // rows of the column matrix: C / group * kernel volume
    int64_t pixels = 0;        // output pixels per image
    int64_t slice_pixels = 0;  // columns of one slice
};
Im2colGeometry im2col_geometry(const ConvShape& s, int64_t slices);

// The grouped kernel's view of a 2-D grouped convolution (conv_algo_applies(grouped) holds).
GroupedShape grouped_shape(const ConvShape& s);

// Workspace, FLOPs and weight bytes of algorithm a on shape s with `slices` (>= 1) input slices and a
// workspace sized for `threads` threads, with the GEMM blocking of g (im2col, gemm1x1).
ConvCost conv_cost(ConvAlgo a, const ConvShape& s, int64_t slices, int threads, const GemmKernels& g);

// The most threads (<= want) whose buffers fit a workspace of `bytes` (0: not even one thread).
int conv_threads_for_workspace(ConvAlgo a, const ConvShape& s, int64_t slices, int64_t bytes, int want,
                               const GemmKernels& g);

}  // namespace flexpipe
