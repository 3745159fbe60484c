// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/eltwise: the float unary functions, one template for float32/float64/float16.
#pragma once

#include <cmath>

#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {
namespace eltwise_detail {

template <typename C>
inline C softplus(C x) {
    // log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Storage type T, compute type C = Elem<T>::C (float for float16).
template <typename T>
void unary_float(UnaryOp op, const UnaryParams& p, const T* x, T* y, int64_t n) {
    using C = typename Elem<T>::C;
    const C alpha = static_cast<C>(p.alpha);
    const C beta = static_cast<C>(p.beta);
    const C gamma = static_cast<C>(p.gamma);
    const C one = 1, zero = 0, half = C(0.5);
    switch (op) {
        case UnaryOp::identity: return map1(x, y, n, [](C v) { return v; });
        case UnaryOp::relu: return map1(x, y, n, [=](C v) { return v < zero ? zero : v; });
        case UnaryOp::sigmoid:
            // split by sign so exp never overflows
            return map1(x, y, n, [=](C v) {
                if (v >= 0) return one / (one + std::exp(-v));
                const C e = std::exp(v);
                return e / (one + e);
            });
        case UnaryOp::swish:  // v * sigmoid(v), sigmoid split by sign as above
            return map1(x, y, n, [=](C v) {
                if (v >= 0) return v / (one + std::exp(-v));
                const C e = std::exp(v);
                return v * (e / (one + e));
            });
        case UnaryOp::tanh: return map1(x, y, n, [](C v) { return std::tanh(v); });
        case UnaryOp::exp: return map1(x, y, n, [](C v) { return std::exp(v); });
        case UnaryOp::log: return map1(x, y, n, [](C v) { return std::log(v); });
        case UnaryOp::sqrt: return map1(x, y, n, [](C v) { return std::sqrt(v); });
        case UnaryOp::erf: return map1(x, y, n, [](C v) { return std::erf(v); });
        case UnaryOp::abs: return map1(x, y, n, [](C v) { return std::fabs(v); });
        case UnaryOp::neg: return map1(x, y, n, [](C v) { return -v; });
        case UnaryOp::reciprocal: return map1(x, y, n, [=](C v) { return one / v; });
        case UnaryOp::floor: return map1(x, y, n, [](C v) { return std::floor(v); });
        case UnaryOp::ceil: return map1(x, y, n, [](C v) { return std::ceil(v); });
        case UnaryOp::round: return map1(x, y, n, [](C v) { return std::nearbyint(v); });
        case UnaryOp::sin: return map1(x, y, n, [](C v) { return std::sin(v); });
        case UnaryOp::cos: return map1(x, y, n, [](C v) { return std::cos(v); });
        case UnaryOp::tan: return map1(x, y, n, [](C v) { return std::tan(v); });
        case UnaryOp::asin: return map1(x, y, n, [](C v) { return std::asin(v); });
        case UnaryOp::acos: return map1(x, y, n, [](C v) { return std::acos(v); });
        case UnaryOp::atan: return map1(x, y, n, [](C v) { return std::atan(v); });
        case UnaryOp::sinh: return map1(x, y, n, [](C v) { return std::sinh(v); });
        case UnaryOp::cosh: return map1(x, y, n, [](C v) { return std::cosh(v); });
        case UnaryOp::asinh: return map1(x, y, n, [](C v) { return std::asinh(v); });
        case UnaryOp::acosh: return map1(x, y, n, [](C v) { return std::acosh(v); });
        case UnaryOp::atanh: return map1(x, y, n, [](C v) { return std::atanh(v); });
        case UnaryOp::softplus: return map1(x, y, n, [](C v) { return softplus(v); });
        case UnaryOp::softsign: return map1(x, y, n, [=](C v) { return v / (one + std::fabs(v)); });
        case UnaryOp::sign: return map1(x, y, n, [=](C v) { return v > zero ? one : v < zero ? -one : v; });
        case UnaryOp::hard_sigmoid:
            return map1(x, y, n, [=](C v) { return std::fmax(zero, std::fmin(one, alpha * v + beta)); });
        case UnaryOp::hard_swish:
            return map1(x, y, n, [=](C v) { return v * std::fmax(zero, std::fmin(one, v / C(6) + half)); });
        case UnaryOp::leaky_relu: return map1(x, y, n, [=](C v) { return v < zero ? alpha * v : v; });
        case UnaryOp::elu:
            return map1(x, y, n, [=](C v) { return v < zero ? alpha * (std::exp(v) - one) : v; });
        case UnaryOp::selu:
            return map1(x, y, n,
                        [=](C v) { return v <= zero ? gamma * (alpha * std::exp(v) - alpha) : gamma * v; });
        case UnaryOp::celu:
            return map1(x, y, n, [=](C v) {
                return std::fmax(zero, v) + std::fmin(zero, alpha * (std::exp(v / alpha) - one));
            });
        case UnaryOp::thresholded_relu: return map1(x, y, n, [=](C v) { return v > alpha ? v : zero; });
        case UnaryOp::gelu:
            return map1(x, y, n,
                        [=](C v) { return half * v * (one + std::erf(v * C(0.70710678118654752440))); });
        case UnaryOp::gelu_tanh:
            return map1(x, y, n, [=](C v) {
                const C inner = C(0.79788456080286535588) * (v + C(0.044715) * v * v * v);
                return half * v * (one + std::tanh(inner));
            });
        case UnaryOp::mish: return map1(x, y, n, [](C v) { return v * std::tanh(softplus(v)); });
        case UnaryOp::shrink:
            return map1(x, y, n, [=](C v) { return v < -alpha ? v + beta : v > alpha ? v - beta : zero; });
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace eltwise_detail
}  // namespace flexpipe
