// SPDX-License-Identifier: Apache-2.0
// The specialised float32 Resize paths: nearest (any scales) and linear over the last two axes.
//
// View: X as [P, in_h, in_w] and Y as [P, out_h, out_w]: W is the last axis, H the second-last (1 for
// rank 1), P the product of the leading axes, each of which must map every output index to one input
// index with weight 1 (identity or nearest). Per-axis tables, filled once per call from
// resize_axis_taps (so indices and weights are exactly those of resize_f32__ref), sit at the start of
// the workspace, 64-byte aligned:
//   nearest: W index [out_w], H index [out_h]                                  (int32)
//   linear:  W taps i0 [out_w], i1 [out_w] (int32), w0 [out_w], w1 [out_w] (float), the same for H;
//            a one-tap entry has i1 = i0, w0 = 1, w1 = 0;
// then, for linear, two rows of out_w floats per thread.
// nearest: output row (p, oh) reads source row (p', ih[oh]). A row whose source equals the previous
// row's is a copy of the previous output row (vertical replication); otherwise it is replicated (W an
// integer upscale s: idx[o] = o / s) or gathered through the W table. Exact.
// linear: each thread keeps the last two horizontally interpolated source rows (lerp), so an upscale
// interpolates each source row about once, then blends two of them per output row (a one-tap row is a
// copy). Float arithmetic: within 2^-20 * max|x| of the double-precision reference.
// Not handled (resize_fast_f32 returns false and the caller runs resize_f32__ref): cubic,
// extrapolation (tf_crop_and_resize outside the roi), interpolating leading axes, a one-tap weight other
// than 1, rows of 2^31 or more elements, a workspace too small for the tables and one thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/resize/resize.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// Workspace bytes of the specialised path for `threads` threads (0 for modes it does not handle).
size_t resize_fast_workspace_bytes(ResizeMode mode, int64_t out_h, int64_t out_w, int threads);

// Runs the specialised path on up to `threads` threads (as many as the workspace holds rows for) and
// returns true, or returns false without writing Y or the workspace when it does not apply.
bool resize_fast_f32(const PoolKernels& k, const ResizeParams& p, const float* x, float* y, void* workspace,
                     size_t workspace_bytes, int threads);

}  // namespace flexpipe
