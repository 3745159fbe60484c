// SPDX-License-Identifier: Apache-2.0
// Helpers the tensor op group (data movement, shape ops, reductions) shares.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/status.h"
#include "kernels/copy/copy.h"
#include "runtime/op_call.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace tensor_ops {

// Below this many elements an op runs on one thread: the OpenMP fork costs more than the copy.
constexpr int64_t serial_below = 1 << 15;

inline int threads_for(const OpCall& c, int64_t work) {
    return work < serial_below ? 1 : c.threads;
}

inline Status check_elem_size(const TensorView& t, const char* op) {
    if (dtype_size(t.dtype) == 0 || (t.data == nullptr && t.numel > 0)) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: tensor has no data or dtype (dtype=%s)", op,
                             dtype_name(t.dtype));
    }
    return Status::ok();
}

// An op that moves x's elements into y: x has a known dtype and its data, y the same dtype.
inline Status check_moved(const TensorView& x, const TensorView& y, const char* op) {
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(x, op));
    return expect_same_dtype(x, y, op);
}

// An op whose body moves the elements of x = in[0] into y = out[0] (check_moved first):
// Status op_slice(const OpCall& c) { return moved_op<slice>(c); }.
template <Status (*Body)(const OpCall& c, const TensorView& x, const TensorView& y)>
Status moved_op(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_moved(c.in[0], c.out[0], c.name));
    return Body(c, c.in[0], c.out[0]);
}

// Normalizes an axis given by the encoder (already non-negative) and checks it against rank.
inline Status check_axis(int64_t axis, int rank, const char* op) {
    if (axis < 0 || axis >= rank) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: axis out of range (axis=%lld, rank=%d)", op,
                             static_cast<long long>(axis), rank);
    }
    return Status::ok();
}

// A strided view for copy_strided__ref: drops size-1 axes and merges axis k into k+1 where the
// source is contiguous across them. Keeps at least one axis.
struct StridedView {
    int rank = 0;
    int64_t dims[copy_max_rank];
    int64_t strides[copy_max_rank];
};

inline StridedView coalesce(int rank, const int64_t* dims, const int64_t* strides) {
    StridedView v;
    for (int k = 0; k < rank; ++k) {
        if (dims[k] == 1) continue;
        if (v.rank > 0 && v.strides[v.rank - 1] == strides[k] * dims[k]) {
            v.dims[v.rank - 1] *= dims[k];
            v.strides[v.rank - 1] = strides[k];
            continue;
        }
        v.dims[v.rank] = dims[k];
        v.strides[v.rank] = strides[k];
        ++v.rank;
    }
    if (v.rank == 0) {
        v.rank = 1;
        v.dims[0] = 1;
        v.strides[0] = 1;
    }
    return v;
}

// Runs copy_strided__ref over the whole (dense) output, split over threads.
inline void run_strided_copy(const OpCall& c, const TensorView& out, const void* src, const StridedView& v) {
    const size_t es = dtype_size(out.dtype);
    parallel_for(out.numel, threads_for(c, out.numel), [&](int64_t begin, int64_t end) {
        copy_strided__ref(out.data, src, es, v.rank, v.dims, v.strides, begin, end);
    });
}

// Reads the single element of an int32/int64 tensor (a run-time scalar argument such as Trilu's k).
inline Status read_scalar_int(const TensorView& t, const char* op, int64_t* out) {
    if ((t.dtype != DType::i64 && t.dtype != DType::i32) || t.numel != 1 || t.data == nullptr) {
        return Status::error(
            StatusCode::invalid_argument,
            "failed to run %s: scalar argument must be one int32/int64 element (dtype=%s, numel=%lld)", op,
            dtype_name(t.dtype), static_cast<long long>(t.numel));
    }
    *out = t.dtype == DType::i64 ? *t.as<int64_t>() : *t.as<int32_t>();
    return Status::ok();
}

// Converts a scalar given as double (float dtypes) or int64 (integer dtypes, bool) to the bits of
// one element of dtype t. Returns false for dtypes it cannot produce.
bool scalar_bits(DType t, double f, int64_t i, void* out);

}  // namespace tensor_ops
}  // namespace flexpipe
