// SPDX-License-Identifier: Apache-2.0
// Reference reductions, ArgMax/ArgMin and CumSum: reduce_impl.h's templates on the dtype of the call.
#include "kernels/reduce/reduce_impl.h"

namespace flexpipe {

namespace {

// fn(T{}) for the element type T of t (one of reduce_dtype_supported's).
template <typename Fn>
void on_dtype(DType t, Fn&& fn) {
    switch (t) {
        case DType::f32: return fn(float{});
        case DType::f64: return fn(double{});
        case DType::i32: return fn(int32_t{});
        default: return fn(int64_t{});
    }
}

}  // namespace

bool reduce_dtype_supported(DType t) {
    return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64;
}

void reduce__ref(DType t, void* dst, const void* src, const ReduceShape& shape, ReduceKind kind, int64_t begin,
                 int64_t end) {
    on_dtype(t, [&](auto v) {
        using T = decltype(v);
        reduce_ref::reduce(static_cast<T*>(dst), static_cast<const T*>(src), shape, kind, begin, end);
    });
}

void arg_reduce__ref(DType t, int64_t* dst, const void* src, int64_t axis_dim, int64_t inner, bool is_min,
                     bool select_last, int64_t begin, int64_t end) {
    on_dtype(t, [&](auto v) {
        using T = decltype(v);
        reduce_ref::arg_reduce(dst, static_cast<const T*>(src), axis_dim, inner, is_min, select_last, begin, end);
    });
}

void cumsum__ref(DType t, void* dst, const void* src, int64_t axis_dim, int64_t inner, bool exclusive,
                 bool reverse, int64_t begin, int64_t end) {
    on_dtype(t, [&](auto v) {
        using T = decltype(v);
        reduce_ref::cumsum(static_cast<T*>(dst), static_cast<const T*>(src), axis_dim, inner, exclusive, reverse,
                           begin, end);
    });
}

}  // namespace flexpipe
