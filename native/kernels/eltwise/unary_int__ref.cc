// SPDX-License-Identifier: Apache-2.0
// Unary elementwise functions on integer and bool rows (scalar reference): the few that ONNX defines
// for integers (Abs, Neg, Sign, Relu, Not).
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

namespace {

template <typename T>
void unary_int(UnaryOp op, const T* x, T* y, int64_t n) {
    using namespace eltwise_detail;
    switch (op) {
        case UnaryOp::identity: return map1(x, y, n, [](T v) { return v; });
        case UnaryOp::abs: return map1(x, y, n, [](T v) { return v < T(0) ? wrap_neg(v) : v; });
        case UnaryOp::neg: return map1(x, y, n, [](T v) { return wrap_neg(v); });
        case UnaryOp::sign:
            return map1(x, y, n, [](T v) { return static_cast<T>(v > T(0) ? 1 : v < T(0) ? -1 : 0); });
        case UnaryOp::relu: return map1(x, y, n, [](T v) { return v < T(0) ? T(0) : v; });
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace

void unary_int__ref(DType t, UnaryOp op, const void* x, void* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    if (t == DType::boolean) {
        const uint8_t* xs = static_cast<const uint8_t*>(x);
        uint8_t* ys = static_cast<uint8_t*>(y);
        if (op == UnaryOp::logical_not) {
            for (int64_t i = 0; i < n; ++i) ys[i] = xs[i] == 0 ? 1 : 0;
        } else {
            for (int64_t i = 0; i < n; ++i) ys[i] = xs[i];
        }
        return;
    }
    eltwise_detail::visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>) {
            unary_int<T>(op, static_cast<const T*>(x), static_cast<T*>(y), n);
        } else {
            FLEXPIPE_DCHECK(false);
        }
    });
}

}  // namespace flexpipe
