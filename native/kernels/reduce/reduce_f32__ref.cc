// SPDX-License-Identifier: Apache-2.0
// Reference reductions, ArgMax/ArgMin and CumSum on float (instances of reduce_impl.h).
#include "kernels/reduce/reduce_impl.h"

namespace flexpipe {

void reduce_f32__ref(float* dst, const float* src, const ReduceShape& shape, ReduceKind kind, int64_t begin,
                     int64_t end) {
    reduce_ref::reduce(dst, src, shape, kind, begin, end);
}

void arg_reduce_f32__ref(int64_t* dst, const float* src, int64_t axis_dim, int64_t inner, bool is_min,
                         bool select_last, int64_t begin, int64_t end) {
    reduce_ref::arg_reduce(dst, src, axis_dim, inner, is_min, select_last, begin, end);
}

void cumsum_f32__ref(float* dst, const float* src, int64_t axis_dim, int64_t inner, bool exclusive,
                     bool reverse, int64_t begin, int64_t end) {
    reduce_ref::cumsum(dst, src, axis_dim, inner, exclusive, reverse, begin, end);
}

}  // namespace flexpipe
