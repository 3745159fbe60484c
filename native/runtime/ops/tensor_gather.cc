// SPDX-License-Identifier: Apache-2.0
// Index-driven ops: Gather, GatherElements, GatherND, ScatterND, OneHot (indices are checked here, copied by
// kernels).
#include <cstring>

#include "kernels/gather/gather.h"
#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

using tensor_ops::check_elem_size;

namespace {

Status check_indices_dtype(const TensorView& idx, const char* op) {
    if (idx.dtype != DType::i32 && idx.dtype != DType::i64) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: indices must be int32 or int64 (got %s)", op,
                             dtype_name(idx.dtype));
    }
    if (idx.numel > 0 && idx.data == nullptr) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: indices have no data", op);
    }
    return Status::ok();
}

inline int64_t index_value(const TensorView& idx, int64_t i) {
    return idx.dtype == DType::i64 ? idx.as<int64_t>()[i] : idx.as<int32_t>()[i];
}

// Every index i with i % period == phase (all when period == 1) must lie in [-n, n).
Status check_indices_range(const TensorView& idx, int64_t n, int64_t period, int64_t phase, const char* op) {
    for (int64_t i = phase; i < idx.numel; i += period) {
        const int64_t v = index_value(idx, i);
        if (v < -n || v >= n) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run %s: index out of range (index=%lld, position=%lld, dim=%lld)",
                                 op, static_cast<long long>(v), static_cast<long long>(i),
                                 static_cast<long long>(n));
        }
    }
    return Status::ok();
}

Status check_out_dim(const TensorView& y, int k, int64_t want, const char* op) {
    if (k >= y.rank || y.dims[k] != want) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: output dim %d should be %lld (rank=%d)", op, k,
                             static_cast<long long>(want), y.rank);
    }
    return Status::ok();
}

}  // namespace

// Gather. in: data (rank r >= 1), indices (int32/int64, any rank q). out: y with dims
// data.dims[0..axis) ++ indices.dims ++ data.dims[axis+1..r). ints: [axis] (non-negative).
static Status gather(const OpCall& c, const TensorView& x, const TensorView& idx, const TensorView& y) {
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], x.rank, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    FLEXPIPE_CHECK_ARG(y.rank == x.rank + idx.rank - 1,
                       "failed to run Gather: output rank is %d, expected %d", y.rank, x.rank + idx.rank - 1);
    for (int k = 0; k < axis; ++k) FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, k, x.dims[k], c.name));
    for (int k = 0; k < idx.rank; ++k)
        FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, axis + k, idx.dims[k], c.name));
    for (int k = axis + 1; k < x.rank; ++k)
        FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, k + idx.rank - 1, x.dims[k], c.name));
    const int64_t n = x.dims[axis];
    FLEXPIPE_RETURN_IF_ERROR(check_indices_range(idx, n, 1, 0, c.name));
    if (y.numel == 0) return Status::ok();
    const int64_t inner = x.span(axis + 1, x.rank);
    const int64_t blocks = x.span(0, axis) * idx.numel;
    const bool idx64 = idx.dtype == DType::i64;
    parallel_for(blocks, tensor_ops::threads_for(c, y.numel), [&](int64_t begin, int64_t end) {
        gather__ref(y.data, x.data, dtype_size(x.dtype), n, inner, idx.data, idx64, idx.numel, begin, end);
    });
    return Status::ok();
}

// GatherElements. in: data (rank r >= 1), indices (int32/int64, rank r, dims <= data's off the
// axis). out: y with indices' dims. ints: [axis] (non-negative).
static Status gather_elements(const OpCall& c, const TensorView& x, const TensorView& idx,
                              const TensorView& y) {
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], x.rank, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    FLEXPIPE_CHECK_ARG(
        idx.rank == x.rank && same_dims(idx, y),
        "failed to run GatherElements: indices must have data's rank and the output's dims (rank=%d)",
        idx.rank);
    for (int k = 0; k < x.rank; ++k) {
        FLEXPIPE_CHECK_ARG(
            k == axis || idx.dims[k] <= x.dims[k],
            "failed to run GatherElements: indices dim %d exceeds data (indices=%lld, data=%lld)", k,
            static_cast<long long>(idx.dims[k]), static_cast<long long>(x.dims[k]));
    }
    FLEXPIPE_RETURN_IF_ERROR(check_indices_range(idx, x.dims[axis], 1, 0, c.name));
    if (y.numel == 0) return Status::ok();
    int64_t strides[max_rank];
    dense_strides(x, strides);
    const bool idx64 = idx.dtype == DType::i64;
    parallel_for(y.numel, tensor_ops::threads_for(c, y.numel), [&](int64_t begin, int64_t end) {
        gather_elements__ref(y.data, x.data, dtype_size(x.dtype), x.rank, idx.dims, strides, axis,
                             x.dims[axis], idx.data, idx64, begin, end);
    });
    return Status::ok();
}

// GatherND. in: data (rank r), indices (int32/int64, rank q >= 1, last dim m with
// batch_dims + m <= r, leading batch_dims dims equal to data's). out: y with dims
// indices.dims[0..q-1) ++ data.dims[batch_dims+m..r). ints: [batch_dims].
static Status gather_nd(const OpCall& c, const TensorView& x, const TensorView& idx, const TensorView& y) {
    const int64_t b = c.int_at(0, 0);
    FLEXPIPE_CHECK_ARG(idx.rank >= 1 && b >= 0 && b < idx.rank,
                       "failed to run GatherND: bad batch_dims (batch_dims=%lld)", static_cast<long long>(b));
    const int64_t m = idx.dims[idx.rank - 1];
    FLEXPIPE_CHECK_ARG(m >= 1 && b + m <= x.rank,
                       "failed to run GatherND: index depth too large (depth=%lld, rank=%d)",
                       static_cast<long long>(m), x.rank);
    const int nb = static_cast<int>(b);
    const int depth = static_cast<int>(m);
    for (int k = 0; k < nb; ++k) {
        FLEXPIPE_CHECK_ARG(idx.dims[k] == x.dims[k],
                           "failed to run GatherND: batch dim %d differs (%lld vs %lld)", k,
                           static_cast<long long>(idx.dims[k]), static_cast<long long>(x.dims[k]));
    }
    FLEXPIPE_CHECK_ARG(y.rank == idx.rank - 1 + x.rank - nb - depth,
                       "failed to run GatherND: output rank is %d, expected %d", y.rank,
                       idx.rank - 1 + x.rank - nb - depth);
    for (int k = 0; k < idx.rank - 1; ++k)
        FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, k, idx.dims[k], c.name));
    for (int k = nb + depth; k < x.rank; ++k)
        FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, idx.rank - 1 + k - nb - depth, x.dims[k], c.name));
    for (int k = 0; k < depth; ++k)
        FLEXPIPE_RETURN_IF_ERROR(check_indices_range(idx, x.dims[nb + k], m, k, c.name));
    if (y.numel == 0) return Status::ok();
    const int64_t batch = x.span(0, nb);
    const int64_t blocks = idx.numel / m;
    const int64_t slice = x.span(nb + depth, x.rank);
    parallel_for(blocks, tensor_ops::threads_for(c, y.numel), [&](int64_t begin, int64_t end) {
        gather_nd__ref(y.data, x.data, dtype_size(x.dtype), depth, x.dims + nb, slice, blocks / batch,
                       idx.data, idx.dtype == DType::i64, begin, end);
    });
    return Status::ok();
}

// The gathers' shared operands: data x, indices idx (int32 or int64), y of x's dtype.
template <Status (*Gather)(const OpCall&, const TensorView&, const TensorView&, const TensorView&)>
static Status gather_op(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& idx = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_moved(x, y, c.name));
    FLEXPIPE_RETURN_IF_ERROR(check_indices_dtype(idx, c.name));
    return Gather(c, x, idx, y);
}

Status op_gather(const OpCall& c) { return gather_op<gather>(c); }
Status op_gather_elements(const OpCall& c) { return gather_op<gather_elements>(c); }
Status op_gather_nd(const OpCall& c) { return gather_op<gather_nd>(c); }

// ScatterND. in: data (rank r >= 1), indices (int32/int64, rank q >= 1, last dim m <= r), updates
// (data's dtype, dims indices.dims[0..q-1) ++ data.dims[m..r)). out: y (data's dtype and dims; may be
// data itself). ints: [reduction] (ScatterReduction; add and mul for float32, float64, int32, int64).
Status op_scatter_nd(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& idx = c.in[1];
    const TensorView& upd = c.in[2];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_moved(x, y, c.name));
    FLEXPIPE_RETURN_IF_ERROR(check_indices_dtype(idx, c.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(upd, y, c.name));
    const int64_t r = c.int_at(0, 0);
    FLEXPIPE_CHECK_ARG(r >= 0 && r <= 2, "failed to run ScatterND: bad reduction %lld", static_cast<long long>(r));
    const auto red = static_cast<ScatterReduction>(r);
    int element = -1;
    switch (x.dtype) {
        case DType::f32: element = 0; break;
        case DType::f64: element = 1; break;
        case DType::i32: element = 2; break;
        case DType::i64: element = 3; break;
        default: break;
    }
    FLEXPIPE_CHECK_ARG(red == ScatterReduction::none || element >= 0,
                       "failed to run ScatterND: reduction %lld needs float32, float64, int32 or int64 (got %s)",
                       static_cast<long long>(r), dtype_name(x.dtype));
    FLEXPIPE_CHECK_ARG(idx.rank >= 1 && x.rank >= 1, "failed to run ScatterND: data and indices need rank >= 1");
    const int64_t m = idx.dims[idx.rank - 1];
    FLEXPIPE_CHECK_ARG(m >= 1 && m <= x.rank, "failed to run ScatterND: index depth %lld does not fit data of rank %d",
                       static_cast<long long>(m), x.rank);
    const int depth = static_cast<int>(m);
    FLEXPIPE_CHECK_ARG(upd.rank == idx.rank - 1 + x.rank - depth,
                       "failed to run ScatterND: updates have rank %d, expected %d", upd.rank, idx.rank - 1 + x.rank - depth);
    for (int k = 0; k < idx.rank - 1; ++k)
        FLEXPIPE_CHECK_ARG(upd.dims[k] == idx.dims[k], "failed to run ScatterND: updates dim %d is %lld, indices' is %lld", k,
                           static_cast<long long>(upd.dims[k]), static_cast<long long>(idx.dims[k]));
    for (int k = depth; k < x.rank; ++k)
        FLEXPIPE_CHECK_ARG(upd.dims[idx.rank - 1 + k - depth] == x.dims[k],
                           "failed to run ScatterND: updates dim %d is %lld, data's dim %d is %lld", idx.rank - 1 + k - depth,
                           static_cast<long long>(upd.dims[idx.rank - 1 + k - depth]), k, static_cast<long long>(x.dims[k]));
    for (int k = 0; k < depth; ++k) FLEXPIPE_RETURN_IF_ERROR(check_indices_range(idx, x.dims[k], m, k, c.name));
    if (y.data != x.data && y.numel > 0) std::memmove(y.data, x.data, static_cast<size_t>(y.numel) * dtype_size(y.dtype));
    if (idx.numel == 0 || y.numel == 0) return Status::ok();
    scatter_nd__ref(y.data, upd.data, dtype_size(y.dtype), element, depth, x.dims, x.span(depth, x.rank), idx.data,
                    idx.dtype == DType::i64, idx.numel / m, red);
    return Status::ok();
}

// OneHot. in: indices (int32/int64/float32/float64, any rank q), values (2 elements of y's dtype:
// off, on). out: y (rank q + 1, y.dims[axis] = depth, other dims the indices'). ints: [axis, depth].
Status op_one_hot(const OpCall& c) {
    const TensorView& idx = c.in[0];
    const TensorView& values = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(y, c.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(values, y, c.name));
    FLEXPIPE_CHECK_ARG(values.numel == 2 && values.data != nullptr,
                       "failed to run OneHot: values must hold 2 elements");
    IndexKind kind;
    switch (idx.dtype) {
        case DType::i32: kind = IndexKind::i32; break;
        case DType::i64: kind = IndexKind::i64; break;
        case DType::f32: kind = IndexKind::f32; break;
        case DType::f64: kind = IndexKind::f64; break;
        default:
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run OneHot: unsupported indices dtype %s", dtype_name(idx.dtype));
    }
    FLEXPIPE_CHECK_ARG(idx.numel == 0 || idx.data != nullptr, "failed to run OneHot: indices have no data");
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], idx.rank + 1, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    const int64_t depth = c.ints[1];
    FLEXPIPE_CHECK_ARG(y.rank == idx.rank + 1, "failed to run OneHot: output rank is %d, expected %d", y.rank,
                       idx.rank + 1);
    for (int k = 0; k < y.rank; ++k) {
        const int64_t want = k < axis ? idx.dims[k] : k == axis ? depth : idx.dims[k - 1];
        FLEXPIPE_RETURN_IF_ERROR(check_out_dim(y, k, want, c.name));
    }
    if (y.numel == 0) return Status::ok();
    const int64_t outer = idx.span(0, axis);
    const int64_t inner = idx.span(axis, idx.rank);
    const size_t es = dtype_size(y.dtype);
    const auto* v = static_cast<const uint8_t*>(values.data);
    parallel_for(outer, tensor_ops::threads_for(c, y.numel), [&](int64_t begin, int64_t end) {
        one_hot__ref(y.data, es, idx.data, kind, depth, inner, v, v + es, begin, end);
    });
    return Status::ok();
}

}  // namespace flexpipe
