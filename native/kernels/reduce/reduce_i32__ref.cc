// SPDX-License-Identifier: Apache-2.0
// Reference reductions, ArgMax/ArgMin and CumSum on int32_t (instances of reduce_impl.h).
#include "kernels/reduce/reduce_impl.h"

namespace flexpipe {

void reduce_i32__ref(int32_t* dst, const int32_t* src, const ReduceShape& shape, ReduceKind kind,
                     int64_t begin, int64_t end) {
    reduce_ref::reduce(dst, src, shape, kind, begin, end);
}

void arg_reduce_i32__ref(int64_t* dst, const int32_t* src, int64_t axis_dim, int64_t inner, bool is_min,
                         bool select_last, int64_t begin, int64_t end) {
    reduce_ref::arg_reduce(dst, src, axis_dim, inner, is_min, select_last, begin, end);
}

void cumsum_i32__ref(int32_t* dst, const int32_t* src, int64_t axis_dim, int64_t inner, bool exclusive,
                     bool reverse, int64_t begin, int64_t end) {
    reduce_ref::cumsum(dst, src, axis_dim, inner, exclusive, reverse, begin, end);
}

}  // namespace flexpipe
