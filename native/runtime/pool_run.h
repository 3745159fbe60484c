// SPDX-License-Identifier: Apache-2.0
// The fast float32 pooling path: drives the row micro-kernels of a PoolKernels table.
//
// Work item: one output row, i.e. one (plane, od, oh) of Y viewed as [planes, out[0], out[1], out[2]];
// callers split row ranges over threads. For each row the driver
//   1. finds the input rows (id, ih) of the window that lie inside the input (no padded rows are read),
//   2. reduces them column by column into a row buffer on the stack (vertical pass, kernels vmax/vsum),
//      in chunks of output columns whose input span fits the buffer,
//   3. reduces kw taps with the stride over the buffer (horizontal pass, hmax/hsum) for the interior
//      columns, whose window lies inside [0, in[2]); the few border columns (windows reaching into the
//      padding) are reduced here over their in-range taps only.
// A 2-D 3x3 stride-2 max pool whose row has its three input rows skips the buffer: kernel max3x3s2
// reduces rows and columns in one pass over the interior (the ResNet and SqueezeNet pools; 21-30%
// faster than steps 2-3 on their shapes), border columns as in step 3.
// Semantics equal maxpool__ref / avgpool_f32__ref (kernels/pool/pool.h): a window with no in-range
// tap gives lowest() (max) or 0 (average); the average divides by the in-range or the padded tap count.
// Max results equal the reference exactly on non-NaN data; averages add in float (the reference in
// double): |got - ref| <= taps * 2^-23 * max|x|.
#pragma once

#include <cstdint>

#include "kernels/pool/pool.h"
#include "runtime/dispatch.h"

namespace flexpipe {

enum class PoolKind { max, avg_exclude_pad, avg_include_pad };

// Floats of the row buffer on the driver's stack (8 KiB).
constexpr int64_t pool_row_buffer = 2048;

// Whether pool_rows_f32 handles s: its window extent along the last axis leaves room in the row buffer.
bool pool_rows_apply(const PoolShape& s);
// Number of output rows: planes * out[0] * out[1].
int64_t pool_rows(const PoolShape& s);
// Output rows [row_begin, row_end) of a max or average pool.
void pool_rows_f32(const PoolKernels& k, const PoolShape& s, PoolKind kind, const float* x, float* y,
                   int64_t row_begin, int64_t row_end);

// GlobalAveragePool (avg = true) or GlobalMaxPool of planes [plane_begin, plane_end), each `size` floats;
// an empty plane gives 0.
void global_pool_f32(const PoolKernels& k, bool avg, const float* x, float* y, int64_t size,
                     int64_t plane_begin, int64_t plane_end);

}  // namespace flexpipe
