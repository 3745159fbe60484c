// SPDX-License-Identifier: Apache-2.0
// A network stem and the max pool after it (SqueezeNet's 3x3 s2 conv + 3x3 s2 pool, ResNet's 7x7 s2
// conv + 3x3 s2 pool), computed together in bands of pool output rows: FlexNN's input slicing carried
// across two layers. The convolution's output, the largest activation of these models (3.2 MB for
// 64 x 111 x 111), never exists whole: each band computes only the conv rows its pool windows read
// into a per-thread buffer, then pools them into Y.
//
// Per band of pool rows [p0, p1) of one image:
//   conv rows  [c0, c1) = [max(0, p0 ps - pp), min(OH, (p1 - 1) ps - pp + pool extent))
//   input rows [i0, i1) = [max(0, c0 s - pad), min(H, (c1 - 1) s - pad + KH))
// The input rows are copied into a [C][i1 - i0][W] buffer and convolved by conv_stem_rows as an image of
// their own (the first band keeps the top padding, rows past the image stay zero as before) into the
// band buffer [M][c1 - c0][OW]; pool_rows_f32 then pools each channel's band rows into Y. Neighbouring
// bands recompute the conv rows their windows share (one row of 17 for SqueezeNet's bands). Both steps
// sum and compare in the same order as the unfused ops, so Y equals MaxPool(Conv(X)) exactly.
//
// Applies when the convolution runs by rows (stem_applies: <= 4 input channels, groups 1, no
// dilation, 2-D) and the pool is 2-D. Work items are (image, band); each thread owns one ring, input
// buffer and band buffer in the workspace. Bands are sized for a band buffer of about 512 KiB (L2), their
// count rounded up to an even number so two threads split them evenly; none of it depends on the thread
// count, so a workspace sized for T threads serves any smaller team.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "kernels/conv/conv.h"
#include "kernels/pool/pool.h"
#include "runtime/conv_band_rows.h"
#include "runtime/dispatch.h"

namespace flexpipe {

// Whether the fused path computes conv cs (X -> its output) followed by max pool ps (that output -> Y):
// cs runs by rows, ps pools a 2-D plane of cs's output size with a window the row driver takes.
bool conv_pool_applies(const ConvShape& cs, const PoolShape& ps);
// Bands of pool output rows (out_rows) over conv rows (mid_rows).
FusedBands conv_pool_bands(const ConvShape& cs, const PoolShape& ps);
// Workspace of conv_pool_run for `threads` threads: 64 bytes of alignment slack, then per thread a
// ring (StemGeometry::floats), the input rows and the band buffer, each 64-byte aligned.
int64_t conv_pool_workspace_bytes(const ConvShape& cs, const PoolShape& ps, int threads);

// Y [N, M, POH, POW] = MaxPool(act(Conv(X) + bias)); ps.planes = N M. Uses min(threads, what the
// workspace holds) threads; an error when it holds none or the shapes do not apply.
Status conv_pool_run(const ConvKernels& ck, const PoolKernels& pk, const ConvShape& cs, const PoolShape& ps,
                     const float* x, const float* w, const float* bias, const ConvActivation& act, float* y, void* ws,
                     size_t ws_bytes, int threads);

}  // namespace flexpipe
