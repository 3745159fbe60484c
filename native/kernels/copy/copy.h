// SPDX-License-Identifier: Apache-2.0
// Data-movement kernels that only depend on the element size: strided copy, row copy, fill, pad, trilu.
//
// Layout: every tensor is dense row-major except the *source* of copy_strided, which is addressed
// through signed element strides (so one kernel serves Transpose, Slice with negative steps, Expand
// through zero strides and Tile through a doubled rank). Destinations are always dense, written in
// row-major order from linear element `begin` to `end`, so the runtime can split [0, numel) over
// threads. Element sizes are 1, 2, 4 or 8 bytes; the kernels move bits and never interpret them.
// Contract: the caller has checked that every source address reached is inside the source buffer.
// Exactness: pure copies, bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexpipe {

// Rank limit of the strided copy: twice the tensor rank limit, so Tile can interleave
// (repeat, dim) pairs of a rank-8 tensor.
constexpr int copy_max_rank = 16;

// dst[i] for linear output index i in [begin, end) = src[sum_k coord_k(i) * src_strides[k]] where
// coord(i) is the row-major coordinate of i in dims[0..rank). Strides are in elements.
void copy_strided__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* dims,
                       const int64_t* src_strides, int64_t begin, int64_t end);

// rows x row_bytes bytes: row r goes from src + r * src_stride to dst + r * dst_stride (bytes).
void copy_rows__ref(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, int64_t rows,
                    size_t row_bytes);

// dst[begin..end) = *value (one element of elem_size bytes).
void fill__ref(void* dst, const void* value, size_t elem_size, int64_t begin, int64_t end);

enum class PadMode : int32_t { constant = 0, reflect = 1, edge = 2, wrap = 3 };

// Output coordinate o maps to input coordinate o - pads_begin[k] on axis k; coordinates outside
// [0, in_dims[k]) are resolved by `mode` (constant: the element *value; reflect: mirror without
// repeating the edge; edge: clamp; wrap: modulo). Writes output rows (last axis) [row_begin, row_end).
// Requires rank >= 1, in_dims[k] >= 1 for every axis whose output is read in a non-constant mode.
void pad__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* in_dims,
              const int64_t* out_dims, const int64_t* pads_begin, PadMode mode, const void* value,
              int64_t row_begin, int64_t row_end);

// For matrices [rows, cols] number m in [m_begin, m_end): keeps element (i, j) when
// j - i >= k (upper) or j - i <= k (lower), writes zero bits otherwise.
void trilu__ref(void* dst, const void* src, size_t elem_size, int64_t rows, int64_t cols, bool upper,
                int64_t k, int64_t m_begin, int64_t m_end);

// dst[i] = start + i * delta for i in [0, n).
void range_f32__ref(float* dst, double start, double delta, int64_t n);
void range_f64__ref(double* dst, double start, double delta, int64_t n);
void range_i32__ref(int32_t* dst, int64_t start, int64_t delta, int64_t n);
void range_i64__ref(int64_t* dst, int64_t start, int64_t delta, int64_t n);
void range_i16__ref(int16_t* dst, int64_t start, int64_t delta, int64_t n);

}  // namespace flexpipe
