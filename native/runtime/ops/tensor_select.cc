// SPDX-License-Identifier: Apache-2.0
// Selection by value, whose output sizes may depend on the data: NonZero, TopK (kernels/select/select.h).
// A data-dependent output is planned at its upper bound; the op writes it packed at its actual size and
// that size into a count tensor (int64 scalar) the engine reads before running the ops after it.
#include "kernels/select/select.h"
#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

// NonZero. in: x (rank >= 1, any dtype). out: y (int64 [rank, capacity]), count (int64 scalar).
// Writes y packed as [rank, n] (row stride n, n = the nonzero elements, which must be <= capacity) and
// n into count.
Status op_nonzero(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    const TensorView& count = c.out[1];
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_elem_size(x, c.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::i64, c.name, "output"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(count, DType::i64, c.name, "count"));
    FLEXPIPE_CHECK_ARG(x.rank >= 1 && y.rank == 2 && y.dims[0] == x.rank && count.numel == 1,
                       "failed to run NonZero: output must be [rank, n] and count a scalar (input rank %d)", x.rank);
    const int64_t n = count_nonzero__ref(x.dtype, x.data, x.numel);
    FLEXPIPE_CHECK_ARG(n <= y.dims[1], "failed to run NonZero: %lld nonzero elements, room for %lld",
                       static_cast<long long>(n), static_cast<long long>(y.dims[1]));
    nonzero__ref(x.dtype, x.data, x.dims, x.rank, n, y.as<int64_t>());
    *count.as<int64_t>() = n;
    return Status::ok();
}

// TopK. in: x (rank >= 1), k (int64 [1]; read when ints[3] < 0). out: values (x's dtype), indices
// (int64), both x's dims with the axis dim >= k (room), [count (int64 scalar) when ints[4] = 1],
// scratch (uint8, 8 bytes per element of the axis). ints: [axis (non-negative), largest (0/1),
// sorted (0/1), k (or -1: from input 1), has count (0/1)]. Writes values and indices packed as x's
// dims with the axis dim k. dtypes: float32, float64, int32, int64.
Status op_top_k(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& values = c.out[0];
    const TensorView& indices = c.out[1];
    const bool has_count = c.ints[4] != 0;
    FLEXPIPE_CHECK_ARG(c.n_out == (has_count ? 4 : 3), "failed to run TopK: expected %d outputs (got %d)",
                       has_count ? 4 : 3, c.n_out);
    const TensorView& scratch = c.out[c.n_out - 1];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, values, c.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(indices, DType::i64, c.name, "indices"));
    FLEXPIPE_CHECK_ARG(top_k_dtype_supported(x.dtype), "failed to run TopK: dtype %s is not supported",
                       dtype_name(x.dtype));
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], x.rank, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    const int64_t n = x.dims[axis];
    int64_t k = c.ints[3];
    if (k < 0) {
        FLEXPIPE_CHECK_ARG(c.n_in >= 2 && c.in[1].present(), "failed to run TopK: k is neither given nor an input");
        FLEXPIPE_RETURN_IF_ERROR(tensor_ops::read_scalar_int(c.in[1], c.name, &k));
    }
    FLEXPIPE_CHECK_ARG(k >= 0 && k <= n, "failed to run TopK: k = %lld is outside 0..%lld (the axis dim)",
                       static_cast<long long>(k), static_cast<long long>(n));
    const int64_t room = values.rank == x.rank ? values.dims[axis] : -1;
    FLEXPIPE_CHECK_ARG(room >= k && same_dims(values, indices),
                       "failed to run TopK: outputs have room for %lld along the axis, k = %lld",
                       static_cast<long long>(room), static_cast<long long>(k));
    FLEXPIPE_CHECK_ARG(scratch.numel * static_cast<int64_t>(dtype_size(scratch.dtype)) >= n * 8,
                       "failed to run TopK: scratch too small for an axis of %lld", static_cast<long long>(n));
    if (has_count) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[2], DType::i64, c.name, "count"));
        *c.out[2].as<int64_t>() = k;
    }
    const int64_t outer = x.span(0, axis);
    const int64_t inner = x.span(axis + 1, x.rank);
    if (k == 0 || outer * inner == 0) return Status::ok();
    top_k__ref(x.dtype, values.data, indices.as<int64_t>(), x.data, outer, n, inner, k, c.ints[1] != 0,
               static_cast<int64_t*>(scratch.data));
    return Status::ok();
}

}  // namespace flexpipe
