// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/eltwise: binary row functions, one template for float dtypes and one for integers.
#pragma once

#include <cmath>

#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {
namespace eltwise_detail {

template <typename T>
void binary_float(BinaryOp op, const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
    using C = typename Elem<T>::C;
    switch (op) {
        case BinaryOp::add: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u + v; });
        case BinaryOp::sub: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u - v; });
        case BinaryOp::mul: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u * v; });
        case BinaryOp::div: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u / v; });
        case BinaryOp::pow: return map2(a, sa, b, sb, y, n, [](C u, C v) { return std::pow(u, v); });
        case BinaryOp::mod: return map2(a, sa, b, sb, y, n, [](C u, C v) { return float_mod(u, v); });
        case BinaryOp::fmod: return map2(a, sa, b, sb, y, n, [](C u, C v) { return std::fmod(u, v); });
        case BinaryOp::max: return map2(a, sa, b, sb, y, n, [](C u, C v) { return nan_max(u, v); });
        case BinaryOp::min: return map2(a, sa, b, sb, y, n, [](C u, C v) { return nan_min(u, v); });
        case BinaryOp::prelu: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u < C(0) ? u * v : u; });
        default: FLEXPIPE_DCHECK(false); return;
    }
}

template <typename T>
void binary_int(BinaryOp op, const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
    switch (op) {
        case BinaryOp::add: return map2(a, sa, b, sb, y, n, [](T u, T v) { return wrap_add(u, v); });
        case BinaryOp::sub: return map2(a, sa, b, sb, y, n, [](T u, T v) { return wrap_sub(u, v); });
        case BinaryOp::mul: return map2(a, sa, b, sb, y, n, [](T u, T v) { return wrap_mul(u, v); });
        case BinaryOp::div: return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_div(u, v); });
        case BinaryOp::pow:
            return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_pow(u, static_cast<int64_t>(v)); });
        case BinaryOp::mod: return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_mod(u, v); });
        case BinaryOp::fmod: return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_fmod(u, v); });
        case BinaryOp::max: return map2(a, sa, b, sb, y, n, [](T u, T v) { return u > v ? u : v; });
        case BinaryOp::min: return map2(a, sa, b, sb, y, n, [](T u, T v) { return u < v ? u : v; });
        case BinaryOp::prelu:
            return map2(a, sa, b, sb, y, n, [](T u, T v) { return u < T(0) ? wrap_mul(u, v) : u; });
        case BinaryOp::shl: return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_shl(u, v); });
        case BinaryOp::shr: return map2(a, sa, b, sb, y, n, [](T u, T v) { return int_shr(u, v); });
        case BinaryOp::bit_and:
            return map2(a, sa, b, sb, y, n, [](T u, T v) { return static_cast<T>(u & v); });
        case BinaryOp::bit_or:
            return map2(a, sa, b, sb, y, n, [](T u, T v) { return static_cast<T>(u | v); });
        case BinaryOp::bit_xor:
            return map2(a, sa, b, sb, y, n, [](T u, T v) { return static_cast<T>(u ^ v); });
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace eltwise_detail
}  // namespace flexpipe
