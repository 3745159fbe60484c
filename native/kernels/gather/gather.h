// SPDX-License-Identifier: Apache-2.0
// Index-driven data movement: Gather, GatherElements, GatherND, ScatterND and OneHot, by element size.
//
// Indices are int32 or int64 (`idx64` selects); negative indices count from the end of their axis.
// Contract: the caller has checked every index against its axis (in [-n, n)); kernels do not.
// Destinations are dense row-major; each kernel writes a range of its natural work unit, so the
// runtime can split work over threads (ScatterND runs on one: its updates may overlap). Exactness: pure
// copies, bit for bit; ScatterND's reductions are one float or integer operation per element.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexpipe {

// data viewed as [outer, axis_dim, inner], indices as a flat list of n_idx entries;
// dst viewed as [outer, n_idx, inner]. Writes the (outer, index) blocks with linear number in
// [begin, end) (block b = o * n_idx + i).
void gather__ref(void* dst, const void* src, size_t elem_size, int64_t axis_dim, int64_t inner,
                 const void* indices, bool idx64, int64_t n_idx, int64_t begin, int64_t end);

// dst has idx_dims (rank dims); dst[c] = src[c with c[axis] replaced by indices[c]], with src
// strides src_strides (elements). Writes linear output elements [begin, end).
void gather_elements__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* idx_dims,
                          const int64_t* src_strides, int axis, int64_t axis_dim, const void* indices,
                          bool idx64, int64_t begin, int64_t end);

// GatherND with data viewed as [batch, data_dims[0..depth), slice] and indices as
// [batch, n_per_batch, depth]: output block (b, q) = slice of data at (b, indices[b, q, :]).
// data_dims are the `depth` indexed dims; slice is the element count of one block.
// Writes blocks [begin, end) of batch * n_per_batch.
void gather_nd__ref(void* dst, const void* src, size_t elem_size, int depth, const int64_t* data_dims,
                    int64_t slice, int64_t n_per_batch, const void* indices, bool idx64, int64_t begin,
                    int64_t end);

// ScatterND's combination of an update with the value it lands on (none: replace).
enum class ScatterReduction : int32_t { none = 0, add = 1, mul = 2 };

// ScatterND into dst viewed as [data_dims[0..depth), slice] (already holding the data): for every
// index row q of `blocks` (indices [blocks, depth]), dst's slice at indices[q, :] becomes the update
// block q (updates [blocks, slice]), or is combined with it element by element. In index order, so
// duplicate indices apply one after another. `element` names the dtype for the reductions: 0 float32,
// 1 float64, 2 int32, 3 int64 (none copies elem_size bytes and ignores it).
void scatter_nd__ref(void* dst, const void* updates, size_t elem_size, int element, int depth, const int64_t* data_dims,
                     int64_t slice, const void* indices, bool idx64, int64_t blocks, ScatterReduction r);

// How OneHot reads its indices: they may be integers or floats (truncated toward zero).
enum class IndexKind : int32_t { i32 = 0, i64 = 1, f32 = 2, f64 = 3 };

// OneHot: indices viewed as [outer, inner]; dst as [outer, depth, inner] of *off_value with
// *on_value where d == index (a negative index counts from depth; an index outside [-depth, depth)
// gives an all-off column). Writes dst outer rows [begin, end).
void one_hot__ref(void* dst, size_t elem_size, const void* indices, IndexKind kind, int64_t depth,
                  int64_t inner, const void* off_value, const void* on_value, int64_t begin, int64_t end);

}  // namespace flexpipe
