// SPDX-License-Identifier: Apache-2.0
// VecRef: the vector abstraction (simd/vec.h) as one scalar float lane, the model the SIMD structs
// follow; the reference kernels written over a family template use it (built for any ISA).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/simd/vec.h"

namespace flexpipe {
namespace {

struct VecRef {
    using V = float;
    using M = bool;
    static constexpr int lanes = 1;
    static constexpr bool masked_memory = false;

    static V load(const float* p) { return *p; }
    static void store(float* p, V v) { *p = v; }
    static V load1(const float* p) { return *p; }
    static V set1(float s) { return s; }
    static V zero() { return 0.0f; }
    static V load_first(const float* p, int64_t n) { return n > 0 ? *p : 0.0f; }
    static void store_first(float* p, int64_t n, V v) {
        if (n > 0) *p = v;
    }
    template <int N>
    static void store_n(float*, V) {}
    static V load_evens(const float* p) { return *p; }
    static V load_strided(const float* p, int64_t) { return *p; }
    static V load_evens_raw(const float* p) { return *p; }
    static void load_taps_s2_raw(const float* p, V (&t)[3]) { load_taps_s2(p, t); }
    static V evens_order(V v) { return v; }
    static V gather(const float* x, const int32_t* idx) { return x[idx[0]]; }

    static void load_taps_s2(const float* p, V (&t)[3]) { t[0] = p[0], t[1] = p[1], t[2] = p[2]; }

    static V add(V a, V b) { return a + b; }
    static V sub(V a, V b) { return a - b; }
    static V mul(V a, V b) { return a * b; }
    static V div(V a, V b) { return a / b; }
    static V sqrt(V a) { return std::sqrt(a); }
    // One expression, so the compiler fuses it where it contracts (aarch64) and rounds twice elsewhere.
    static V fma(V a, V b, V c) { return a * b + c; }
    static V fms(V a, V b, V c) { return a * b - c; }
    static V fnma(V a, V b, V c) { return c - a * b; }
    static V abs(V a) { return std::fabs(a); }
    static V round(V a) { return std::nearbyint(a); }
    static V or_sign(V y, V x) { return std::signbit(x) ? -std::fabs(y) : y; }
    static V xor_sign(V y, V x) { return std::signbit(x) ? -y : y; }
    static V scale_pow2(V y, V n) {
        const int ni = static_cast<int>(n), n1 = ni >> 1;
        return std::ldexp(std::ldexp(y, n1), ni - n1);
    }

    static M lt(V a, V b) { return a < b; }
    static M gt(V a, V b) { return a > b; }
    static M ge(V a, V b) { return a >= b; }
    static M isnan(V a) { return a != a; }
    static M first_lanes(int64_t n) { return n > 0; }
    static V select(M m, V a, V b) { return m ? a : b; }
    static V zero_if(M m, V a) { return m ? 0.0f : a; }

    static V max(V a, V b) { return a > b ? a : b; }
    static V min(V a, V b) { return a < b ? a : b; }
    static V max_nan(V a, V b) { return a != a || a > b ? a : b; }
    static V min_nan(V a, V b) { return a != a || a < b ? a : b; }
    static V max_fast(V a, V b) { return a > b ? a : b; }
    static V min_fast(V a, V b) { return a < b ? a : b; }
    static V clamp(V v, V lo, V hi) {
        v = v < lo ? lo : v;
        return v > hi ? hi : v;
    }

    static float hsum(V v) { return v; }
    static double hsum_double(V v) { return v; }
    using D = double;  // VecRef's one lane: dadd_low adds it, dadd_high nothing
    static D dzero() { return 0.0; }
    static D dadd(D a, D b) { return a + b; }
    static D dadd_low(D d, V v) { return d + v; }
    static D dadd_high(D d, V) { return d; }
    static double dsum(D d) { return d; }
    static float hmax(V v) { return v; }
    static void transpose(V (&)[1]) {}
};

}  // namespace
}  // namespace flexpipe
