// SPDX-License-Identifier: Apache-2.0
// Data-movement ops that are strided copies: Transpose, Slice, Expand, Tile, Concat, Split.
#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

using tensor_ops::check_elem_size;

// Transpose. in: data. out: y (rank r, y.dims[k] = data.dims[perm[k]]). ints: perm[0..r).
static Status transpose(const OpCall& c, const TensorView& x, const TensorView& y) {
    FLEXPIPE_CHECK_ARG(
        x.rank == y.rank && c.n_ints == x.rank,
        "failed to run Transpose: perm length, input rank and output rank differ (perm=%d, in=%d, out=%d)",
        c.n_ints, x.rank, y.rank);
    int64_t in_strides[max_rank];
    dense_strides(x, in_strides);
    int64_t strides[max_rank];
    bool used[max_rank] = {false};
    for (int k = 0; k < x.rank; ++k) {
        const int64_t p = c.ints[k];
        FLEXPIPE_CHECK_ARG(p >= 0 && p < x.rank && !used[p],
                           "failed to run Transpose: perm is not a permutation (perm[%d]=%lld)", k,
                           static_cast<long long>(p));
        used[p] = true;
        FLEXPIPE_CHECK_ARG(y.dims[k] == x.dims[p],
                           "failed to run Transpose: output dim %d is %lld, expected %lld", k,
                           static_cast<long long>(y.dims[k]), static_cast<long long>(x.dims[p]));
        strides[k] = in_strides[p];
    }
    if (y.numel == 0) return Status::ok();
    tensor_ops::run_strided_copy(c, y, x.data, tensor_ops::coalesce(y.rank, y.dims, strides));
    return Status::ok();
}
Status op_transpose(const OpCall& c) { return tensor_ops::moved_op<transpose>(c); }

// Slice. in: data. out: y (same rank; y.dims[k] elements taken on axis k). ints: start[0..r),
// step[0..r): element i of axis k is data index start[k] + i * step[k] (already clamped by the
// encoder; step != 0, may be negative).
static Status slice(const OpCall& c, const TensorView& x, const TensorView& y) {
    FLEXPIPE_CHECK_ARG(x.rank == y.rank && c.n_ints == 2 * x.rank,
                       "failed to run Slice: expected rank %d output and %d ints (got rank %d, %d ints)",
                       x.rank, 2 * x.rank, y.rank, c.n_ints);
    if (y.numel == 0) return Status::ok();
    int64_t in_strides[max_rank];
    dense_strides(x, in_strides);
    int64_t strides[max_rank];
    int64_t offset = 0;
    for (int k = 0; k < x.rank; ++k) {
        const int64_t start = c.ints[k];
        const int64_t step = c.ints[x.rank + k];
        const int64_t last = start + (y.dims[k] - 1) * step;
        FLEXPIPE_CHECK_ARG(
            step != 0 && start >= 0 && start < x.dims[k] && last >= 0 && last < x.dims[k],
            "failed to run Slice: axis %d reads outside the input (start=%lld, step=%lld, count=%lld, "
            "dim=%lld)",
            k, static_cast<long long>(start), static_cast<long long>(step), static_cast<long long>(y.dims[k]),
            static_cast<long long>(x.dims[k]));
        offset += start * in_strides[k];
        strides[k] = step * in_strides[k];
    }
    const void* src =
        static_cast<const uint8_t*>(x.data) + offset * static_cast<int64_t>(dtype_size(x.dtype));
    tensor_ops::run_strided_copy(c, y, src, tensor_ops::coalesce(y.rank, y.dims, strides));
    return Status::ok();
}
Status op_slice(const OpCall& c) { return tensor_ops::moved_op<slice>(c); }

// Expand (numpy broadcasting of data to the output dims). in: data. out: y. ints: none.
static Status expand(const OpCall& c, const TensorView& x, const TensorView& y) {
    int64_t strides[max_rank];
    FLEXPIPE_CHECK_ARG(
        broadcast_strides(x, y, strides),
        "failed to run Expand: input does not broadcast to the output (in rank=%d, out rank=%d)", x.rank,
        y.rank);
    if (y.numel == 0) return Status::ok();
    if (y.rank == 0) {
        std::memcpy(y.data, x.data, dtype_size(x.dtype));
        return Status::ok();
    }
    tensor_ops::run_strided_copy(c, y, x.data, tensor_ops::coalesce(y.rank, y.dims, strides));
    return Status::ok();
}
Status op_expand(const OpCall& c) { return tensor_ops::moved_op<expand>(c); }

// Tile. in: data. out: y (y.dims[k] = data.dims[k] * repeats[k]). ints: repeats[0..r).
// Seen as a strided copy of rank 2r: dims (repeats[k], data.dims[k]), strides (0, stride[k]).
static Status tile(const OpCall& c, const TensorView& x, const TensorView& y) {
    FLEXPIPE_CHECK_ARG(x.rank == y.rank && c.n_ints == x.rank,
                       "failed to run Tile: expected rank %d output and %d repeats (got rank %d, %d repeats)",
                       x.rank, x.rank, y.rank, c.n_ints);
    int64_t in_strides[max_rank];
    dense_strides(x, in_strides);
    int64_t dims[copy_max_rank];
    int64_t strides[copy_max_rank];
    for (int k = 0; k < x.rank; ++k) {
        FLEXPIPE_CHECK_ARG(c.ints[k] >= 0 && y.dims[k] == x.dims[k] * c.ints[k],
                           "failed to run Tile: output dim %d is %lld, expected %lld x %lld", k,
                           static_cast<long long>(y.dims[k]), static_cast<long long>(x.dims[k]),
                           static_cast<long long>(c.ints[k]));
        dims[2 * k] = c.ints[k];
        strides[2 * k] = 0;
        dims[2 * k + 1] = x.dims[k];
        strides[2 * k + 1] = in_strides[k];
    }
    if (y.numel == 0) return Status::ok();
    if (y.rank == 0) {
        std::memcpy(y.data, x.data, dtype_size(x.dtype));
        return Status::ok();
    }
    tensor_ops::run_strided_copy(c, y, x.data, tensor_ops::coalesce(2 * x.rank, dims, strides));
    return Status::ok();
}
Status op_tile(const OpCall& c) { return tensor_ops::moved_op<tile>(c); }

namespace {

// Checks that `part` matches `whole` on every axis but `axis` and returns its size on `axis`.
Status check_part(const TensorView& part, const TensorView& whole, int axis, const char* op, int index) {
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(part, whole, op));
    FLEXPIPE_CHECK_ARG(part.rank == whole.rank, "failed to run %s: tensor %d has rank %d, expected %d", op,
                       index, part.rank, whole.rank);
    for (int k = 0; k < whole.rank; ++k) {
        FLEXPIPE_CHECK_ARG(k == axis || part.dims[k] == whole.dims[k],
                           "failed to run %s: tensor %d has dim %d = %lld, expected %lld", op, index, k,
                           static_cast<long long>(part.dims[k]), static_cast<long long>(whole.dims[k]));
    }
    if (part.numel > 0 && part.data == nullptr) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: tensor %d has no data", op,
                             index);
    }
    return Status::ok();
}

// Concat and Split share one driver: the whole tensor is [outer, sum of parts on axis, inner]
// and part i is [outer, part_i, inner]; `gather` copies parts into the whole, else the reverse.
Status concat_or_split(const OpCall& c, const TensorView* parts, int n_parts, const TensorView& whole,
                       bool gather) {
    FLEXPIPE_RETURN_IF_ERROR(tensor_ops::check_axis(c.ints[0], whole.rank, c.name));
    const int axis = static_cast<int>(c.ints[0]);
    int64_t total = 0;
    for (int i = 0; i < n_parts; ++i) {
        FLEXPIPE_RETURN_IF_ERROR(check_part(parts[i], whole, axis, c.name, i));
        total += parts[i].dims[axis];
    }
    FLEXPIPE_CHECK_ARG(total == whole.dims[axis],
                       "failed to run %s: parts sum to %lld on axis %d, expected %lld", c.name,
                       static_cast<long long>(total), axis, static_cast<long long>(whole.dims[axis]));
    if (whole.numel == 0) return Status::ok();
    const int64_t es = static_cast<int64_t>(dtype_size(whole.dtype));
    const int64_t outer = whole.span(0, axis);
    const int64_t inner = whole.span(axis + 1, whole.rank) * es;
    const int64_t whole_row = whole.dims[axis] * inner;
    auto* base = static_cast<uint8_t*>(whole.data);
    parallel_for(outer, tensor_ops::threads_for(c, whole.numel), [&](int64_t begin, int64_t end) {
        int64_t at = 0;
        for (int i = 0; i < n_parts; ++i) {
            const int64_t row = parts[i].dims[axis] * inner;
            auto* w = base + begin * whole_row + at;
            auto* p = static_cast<uint8_t*>(parts[i].data) + begin * row;
            if (row > 0) {
                if (gather)
                    copy_rows__ref(w, whole_row, p, row, end - begin, static_cast<size_t>(row));
                else
                    copy_rows__ref(p, row, w, whole_row, end - begin, static_cast<size_t>(row));
            }
            at += row;
        }
    });
    return Status::ok();
}

}  // namespace

// Concat. in: x0 .. x(n-1) (n >= 1, same dtype and rank, equal dims except on axis). out: y.
// ints: [axis] (non-negative).
Status op_concat(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(c.out[0], c.name));
    return concat_or_split(c, c.in, c.n_in, c.out[0], true);
}

// Split. in: x. out: y0 .. y(n-1) (their sizes on axis sum to x's). ints: [axis] (non-negative).
Status op_split(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(c.in[0], c.name));
    return concat_or_split(c, c.out, c.n_out, c.in[0], false);
}

}  // namespace flexpipe
