// SPDX-License-Identifier: Apache-2.0
// Reductions over arbitrary axes (ReduceSum ... ReduceLogSumExp), ArgMax/ArgMin and CumSum.
//
// Layout: the input is dense row-major; the runtime splits its axes into "kept" axes (the output
// axes, in order) and "reduced" axes, each with its input stride in elements (ReduceShape). Output
// element o (row-major over the kept dims) reduces the sub-tensor at the kept coordinates of o, in
// row-major order of the reduced axes. Adjacent axes may be merged by the caller when contiguous.
// Accumulation: float types accumulate in double, integer types in int64 (sum, prod, min, max,
// L1, sum of squares; mean truncates toward zero); L2, LogSum and LogSumExp go through double.
// An empty reduction gives the identity of the operation (0 for sums, 1 for prod, lowest/highest
// value for max/min, -inf for LogSumExp and LogSum of floats).
// Tolerance versus numpy float32 reductions: |diff| <= 1e-6 * sum |x| (double accumulation is
// more accurate than numpy's pairwise float32 sums, never less).
#pragma once

#include <cstdint>

#include "common/dtype.h"

namespace flexpipe {

enum class ReduceKind : int32_t {
    sum = 0,
    mean = 1,
    max = 2,
    min = 3,
    prod = 4,
    l1 = 5,
    l2 = 6,
    log_sum = 7,
    log_sum_exp = 8,
    sum_square = 9,
};

struct ReduceShape {
    int kept_rank = 0;
    int64_t kept_dims[8] = {0};
    int64_t kept_strides[8] = {0};
    int red_rank = 0;  // 0 means: reduce nothing (every output is one input element)
    int64_t red_dims[8] = {0};
    int64_t red_strides[8] = {0};
};

// The dtypes of the reductions below: float32, float64, int32, int64 (src and dst of one dtype, but
// ArgMax/ArgMin's int64 indices).
bool reduce_dtype_supported(DType t);

// dst[o] for o in [begin, end).
void reduce__ref(DType t, void* dst, const void* src, const ReduceShape& shape, ReduceKind kind, int64_t begin,
                 int64_t end);

// src viewed as [outer, axis_dim, inner] (axis_dim >= 1), dst as [outer, inner]: index along the
// axis of the largest (or smallest, is_min) value, the first one or the last one on ties.
// NaN is never selected unless every value is NaN. Writes dst[begin..end).
void arg_reduce__ref(DType t, int64_t* dst, const void* src, int64_t axis_dim, int64_t inner, bool is_min,
                     bool select_last, int64_t begin, int64_t end);

// src and dst viewed as [outer, axis_dim, inner]: running sums along the axis, inclusive or
// exclusive (starting from 0), forward or reverse. Writes outer rows [begin, end).
void cumsum__ref(DType t, void* dst, const void* src, int64_t axis_dim, int64_t inner, bool exclusive,
                 bool reverse, int64_t begin, int64_t end);

}  // namespace flexpipe
