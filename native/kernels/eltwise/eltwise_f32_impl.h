// SPDX-License-Identifier: Apache-2.0
// The float32 unary, binary and Clip rows written once over a vector type (simd/vec.h) with its vector
// math (VecMath<Vec>, vmath_impl.h); the ISA files instantiate them.
//
// The CNN and encoder hot functions are vectorized, every other op runs its __ref (same contract, see
// eltwise.h). Rows go two vectors at a time, then one, then a tail of fewer than `lanes` elements
// through load_first / store_first, so nothing outside [0, n) is read or written. The selects and
// clamps use Vec's exact forms (max, min, clamp, zero_if), so Relu, LeakyRelu, HardSigmoid, HardSwish,
// Clip and the binary ops equal __ref bit for bit, NaN and -0 included; the transcendental ones carry
// the vector math's errors (eltwise.h, "Vector math").
#pragma once

#include <cstdint>

#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"

namespace flexpipe {
namespace {

// y[i] = f(x[i]); masked-off tail lanes read 0.0f and are not stored. f is a lambda (inlined).
template <class Vec, typename F>
inline void eltwise_map(const float* x, float* y, int64_t n, F f) {
    constexpr int L = Vec::lanes;
    int64_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        const auto a = f(Vec::load(x + i));
        const auto b = f(Vec::load(x + i + L));
        Vec::store(y + i, a);
        Vec::store(y + i + L, b);
    }
    for (; i + L <= n; i += L) Vec::store(y + i, f(Vec::load(x + i)));
    if (i < n) Vec::store_first(y + i, n - i, f(Vec::load_first(x + i, n - i)));
}

// max(0, min(1, t)) with std::fmin/fmax's rule that a NaN t gives 1 (min(t, 1) is t < 1 ? t : 1).
template <class Vec>
inline typename Vec::V unit_clamp(typename Vec::V t) {
    return Vec::max(Vec::min(t, Vec::set1(1.0f)), Vec::zero());
}

template <class Vec>
void unary_f32_vec(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    using V = typename Vec::V;
    FLEXPIPE_DCHECK(n >= 0);
    const V zero = Vec::zero();
    const V alpha = Vec::set1(static_cast<float>(p.alpha));
    const V beta = Vec::set1(static_cast<float>(p.beta));
    switch (op) {
        case UnaryOp::relu:  // v < 0 ? 0 : v, exactly (NaN and -0 pass through)
            return eltwise_map<Vec>(x, y, n, [=](V v) { return Vec::zero_if(Vec::lt(v, zero), v); });
        case UnaryOp::leaky_relu:
            return eltwise_map<Vec>(x, y, n, [=](V v) { return Vec::select(Vec::lt(v, zero), Vec::mul(alpha, v), v); });
        case UnaryOp::sigmoid: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::sigmoid(v); });
        case UnaryOp::swish: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::mul(v, Vec::sigmoid(v)); });
        case UnaryOp::tanh: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::tanh(v); });
        case UnaryOp::exp: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::exp(v); });
        case UnaryOp::erf: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::erf(v); });
        case UnaryOp::sqrt: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::sqrt(v); });
        case UnaryOp::gelu: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::gelu(v); });
        case UnaryOp::gelu_tanh: return eltwise_map<Vec>(x, y, n, [](V v) { return Vec::gelu_tanh(v); });
        case UnaryOp::hard_sigmoid:  // alpha*v + beta rounded twice, as the ref computes it
            return eltwise_map<Vec>(x, y, n, [=](V v) { return unit_clamp<Vec>(Vec::add(Vec::mul(alpha, v), beta)); });
        case UnaryOp::hard_swish:  // v * clamp(v/6 + 1/2); v * (1/6) may differ from v / 6 by 1 ulp
            return eltwise_map<Vec>(x, y, n, [](V v) {
                const V t = Vec::add(Vec::mul(v, Vec::set1(1.0f / 6.0f)), Vec::set1(0.5f));
                return Vec::mul(v, unit_clamp<Vec>(t));
            });
        default: return unary_f32__ref(op, p, x, y, n);
    }
}

// y = min(max(x, lo), hi) exactly as clip__ref (Vec::clamp).
template <class Vec>
void clip_f32_vec(const float* x, float* y, int64_t n, float lo, float hi) {
    FLEXPIPE_DCHECK(n >= 0);
    const typename Vec::V l = Vec::set1(lo), h = Vec::set1(hi);
    eltwise_map<Vec>(x, y, n, [=](typename Vec::V v) { return Vec::clamp(v, l, h); });
}

// y[i] = f(a[i*sa], b[i*sb]) with the stride pattern as template arguments (the dense loops carry no
// per-element branches); a stride-0 operand is broadcast once.
template <class Vec, bool dense_a, bool dense_b, typename F>
void binary_map(const float* a, const float* b, float* y, int64_t n, F f) {
    constexpr int L = Vec::lanes;
    const typename Vec::V ab = Vec::set1(a[0]), bb = Vec::set1(b[0]);
    auto load_a = [&](int64_t i) { return dense_a ? Vec::load(a + i) : ab; };
    auto load_b = [&](int64_t i) { return dense_b ? Vec::load(b + i) : bb; };
    int64_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        const auto r0 = f(load_a(i), load_b(i));
        const auto r1 = f(load_a(i + L), load_b(i + L));
        Vec::store(y + i, r0);
        Vec::store(y + i + L, r1);
    }
    for (; i + L <= n; i += L) Vec::store(y + i, f(load_a(i), load_b(i)));
    if (i < n) {
        const auto va = dense_a ? Vec::load_first(a + i, n - i) : ab;
        const auto vb = dense_b ? Vec::load_first(b + i, n - i) : bb;
        Vec::store_first(y + i, n - i, f(va, vb));
    }
}

template <class Vec, typename F>
void binary_run(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, F f) {
    if (sa && sb) return binary_map<Vec, true, true>(a, b, y, n, f);
    if (sa) return binary_map<Vec, true, false>(a, b, y, n, f);
    return binary_map<Vec, false, true>(a, b, y, n, f);
}

// Add, Sub, Mul, Div, Max, Min bit-exact with __ref; other ops (and two broadcast operands) on __ref.
template <class Vec>
void binary_f32_vec(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
    using V = typename Vec::V;
    FLEXPIPE_DCHECK(n >= 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1));
    if (n <= 0) return;
    if (sa == 0 && sb == 0) return binary_f32__ref(op, a, sa, b, sb, y, n);
    switch (op) {
        case BinaryOp::add: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::add(u, v); });
        case BinaryOp::sub: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::sub(u, v); });
        case BinaryOp::mul: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::mul(u, v); });
        case BinaryOp::div: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::div(u, v); });
        case BinaryOp::max: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::max_nan(u, v); });
        case BinaryOp::min: return binary_run<Vec>(a, sa, b, sb, y, n, [](V u, V v) { return Vec::min_nan(u, v); });
        default: return binary_f32__ref(op, a, sa, b, sb, y, n);
    }
}

}  // namespace
}  // namespace flexpipe
