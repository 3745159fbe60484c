// SPDX-License-Identifier: Apache-2.0
// Selection by value: NonZero (the coordinates of the elements that are not zero) and TopK (the k
// largest or smallest elements along an axis). How many elements NonZero selects, and how many TopK
// does when k is computed by the model, depend on the data: the plan gives their outputs room for the
// upper bound (Nimble's upper-bound shape functions) and the kernels write them packed at the actual
// size, which the engine reads back before it runs the ops after them (lib/runtime/data-dims.ts).
#pragma once

#include <cstdint>

#include "common/dtype.h"

namespace flexpipe {

// Elements of src (n of dtype t) that are not zero. A float is zero when it is +0 or -0 (NaN is not
// zero); any other dtype when all its bits are 0.
int64_t count_nonzero__ref(DType t, const void* src, int64_t n);

// The coordinates of src's nonzero elements (dims[0..rank), row-major), in row-major order, as an
// int64 matrix [rank, count] with row stride `count`: dst[r * count + j] is coordinate r of the j-th
// nonzero element. count is count_nonzero__ref's.
void nonzero__ref(DType t, const void* src, const int64_t* dims, int rank, int64_t count, int64_t* dst);

bool top_k_dtype_supported(DType t);  // float32, float64, int32, int64

// src viewed as [outer, axis_dim, inner]: for each of the outer * inner lines along the axis, its k
// (<= axis_dim) largest (or smallest) elements and their indices along the axis, into values and
// indices viewed as [outer, k, inner], best first (the value order of sorted output; ONNX allows any
// order when sorted = 0, and this one is what onnxruntime gives). Ties: the lower index first. NaN
// ranks above every number (so a largest-k selects it first, a smallest-k last). scratch holds
// axis_dim int64s.
void top_k__ref(DType t, void* values, int64_t* indices, const void* src, int64_t outer, int64_t axis_dim,
                int64_t inner, int64_t k, bool largest, int64_t* scratch);

}  // namespace flexpipe
