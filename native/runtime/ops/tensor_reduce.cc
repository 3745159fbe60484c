// SPDX-License-Identifier: Apache-2.0
// Reductions: Reduce (ReduceSum ... ReduceLogSumExp over any axes), ArgReduce (ArgMax/ArgMin), CumSum.
#include "kernels/reduce/reduce.h"
#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

namespace {

Status unsupported_dtype(const char* op, DType t) {
    return Status::error(StatusCode::unsupported, "failed to run %s: unsupported dtype %s", op,
                         dtype_name(t));
}

// Splits x's axes into kept and reduced ones (flags[k] != 0: reduced), dropping size-1 axes and
// merging neighbours of the same kind that are contiguous in x.
ReduceShape make_reduce_shape(const TensorView& x, const int64_t* flags) {
    int64_t strides[max_rank];
    dense_strides(x, strides);
    ReduceShape s;
    int prev = -1;  // kind of the last axis appended: 0 kept, 1 reduced
    for (int k = 0; k < x.rank; ++k) {
        const int64_t d = x.dims[k];
        if (d == 1) continue;
        const bool red = flags[k] != 0;
        int& rank = red ? s.red_rank : s.kept_rank;
        int64_t* dims = red ? s.red_dims : s.kept_dims;
        int64_t* st = red ? s.red_strides : s.kept_strides;
        if (prev == int(red) && rank > 0 && st[rank - 1] == strides[k] * d) {
            dims[rank - 1] *= d;
            st[rank - 1] = strides[k];
        } else {
            dims[rank] = d;
            st[rank] = strides[k];
            ++rank;
        }
        prev = int(red);
    }
    return s;
}

}  // namespace

// Reduce. in: data (rank r). out: y whose dims are data's with reduced axes set to 1 (keepdims) or
// removed. ints: [kind (0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L1, 6 L2, 7 LogSum, 8 LogSumExp,
// 9 SumSquare), reduced[0..r) (1 when axis k is reduced)]. dtypes: float32, float64, int32, int64.
Status op_reduce(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, c.name));
    FLEXPIPE_CHECK_ARG(c.n_ints == 1 + x.rank, "failed to run Reduce: expected %d ints (got %d)", 1 + x.rank,
                       c.n_ints);
    const int64_t kind = c.ints[0];
    FLEXPIPE_CHECK_ARG(kind >= 0 && kind <= 9, "failed to run Reduce: unknown kind (kind=%lld)",
                       static_cast<long long>(kind));
    const int64_t* flags = c.ints + 1;
    // Output dims: either keepdims (rank r, 1 on reduced axes) or the kept axes alone.
    bool keep_ok = y.rank == x.rank;
    bool drop_ok = true;
    int j = 0;
    for (int k = 0; k < x.rank; ++k) {
        if (keep_ok && y.dims[k] != (flags[k] != 0 ? 1 : x.dims[k])) keep_ok = false;
        if (flags[k] != 0) continue;
        if (j >= y.rank || y.dims[j] != x.dims[k]) drop_ok = false;
        ++j;
    }
    FLEXPIPE_CHECK_ARG(
        keep_ok || (drop_ok && j == y.rank),
        "failed to run Reduce: output dims do not match the reduced input (in rank=%d, out rank=%d)", x.rank,
        y.rank);
    if (y.numel == 0) return Status::ok();
    FLEXPIPE_CHECK_ARG(x.numel == 0 || x.data != nullptr, "failed to run Reduce: input has no data");
    const ReduceShape s = make_reduce_shape(x, flags);
    const auto rk = static_cast<ReduceKind>(kind);
    const int threads = tensor_ops::threads_for(c, x.numel);
    if (!reduce_dtype_supported(x.dtype)) return unsupported_dtype(c.name, x.dtype);
    parallel_for(y.numel, threads, [&](int64_t b, int64_t e) { reduce__ref(x.dtype, y.data, x.data, s, rk, b, e); });
    return Status::ok();
}

// ArgReduce (ArgMax, ArgMin). in: data (rank r, dim on axis >= 1). out: y (int64, data's dims with
// the axis set to 1 or removed). ints: [axis (non-negative), is_min (0/1), select_last (0/1)].
// dtypes: float32, float64, int32, int64.
Status op_arg_reduce(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::i64, c.name, "output"));
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], x.rank, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    const int64_t n = x.dims[axis];
    const int64_t inner = x.span(axis + 1, x.rank);
    const int64_t outer = x.span(0, axis);
    FLEXPIPE_CHECK_ARG(n >= 1 || outer * inner == 0,
                       "failed to run ArgReduce: reduced axis is empty (axis=%d)", axis);
    FLEXPIPE_CHECK_ARG(y.numel == outer * inner && (y.rank == x.rank || y.rank == x.rank - 1),
                       "failed to run ArgReduce: output has %lld elements, expected %lld",
                       static_cast<long long>(y.numel), static_cast<long long>(outer * inner));
    if (y.numel == 0) return Status::ok();
    const bool is_min = c.ints[1] != 0;
    const bool last = c.ints[2] != 0;
    const int threads = tensor_ops::threads_for(c, x.numel);
    int64_t* d = y.as<int64_t>();
    if (!reduce_dtype_supported(x.dtype)) return unsupported_dtype(c.name, x.dtype);
    parallel_for(y.numel, threads, [&](int64_t b, int64_t e) {
        arg_reduce__ref(x.dtype, d, x.data, n, inner, is_min, last, b, e);
    });
    return Status::ok();
}

// CumSum. in: x (rank >= 1), axis (optional int32/int64 scalar, may be negative: when present it
// overrides ints[0]). out: y (same dims and dtype). ints: [axis (non-negative), exclusive (0/1),
// reverse (0/1)]. dtypes: float32, float64, int32, int64.
Status op_cumsum(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, c.name));
    FLEXPIPE_CHECK_ARG(same_dims(x, y), "failed to run CumSum: output dims differ from input (rank=%d)",
                       x.rank);
    int64_t axis64 = c.ints[0];
    if (c.n_in > 1 && c.in[1].present()) {
        FLEXPIPE_RETURN_IF_ERROR(tensor_ops::read_scalar_int(c.in[1], c.name, &axis64));
        if (axis64 < 0) axis64 += x.rank;
    }
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(axis64, x.rank, c.name));
    if (y.numel == 0) return Status::ok();
    const int axis = static_cast<int>(axis64);
    const int64_t n = x.dims[axis];
    const int64_t inner = x.span(axis + 1, x.rank);
    const int64_t outer = x.span(0, axis);
    const bool excl = c.ints[1] != 0;
    const bool rev = c.ints[2] != 0;
    const int threads = tensor_ops::threads_for(c, x.numel);
    if (!reduce_dtype_supported(x.dtype)) return unsupported_dtype(c.name, x.dtype);
    parallel_for(outer, threads, [&](int64_t b, int64_t e) {
        cumsum__ref(x.dtype, y.data, x.data, n, inner, excl, rev, b, e);
    });
    return Status::ok();
}

}  // namespace flexpipe
