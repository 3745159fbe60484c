// SPDX-License-Identifier: Apache-2.0
// The row micro-kernels of the fast float32 pooling path (contract in pool.h) written once over a vector
// type (simd/vec.h); pool_row_f32__avx2 and __neon instantiate them (L = Vec::lanes = 8 or 4).
//
// Max is Vec::max_fast(x, m): x > m ? x : m on AVX (the __ref expression, so results equal __ref bit for
// bit, NaN and signed zeros included), FMAX on NEON (NaN propagates: unspecified by the contract). Stride 2
// reads the even elements in the ISA's raw lane order (load_evens_raw: one in-lane shuffle on AVX2, a
// de-interleaving load on NEON); every tap has the same order, so a window's max or sum is taken in it and
// one evens_order puts the result in place. Sums add in __ref's order in float.
// Kept specialised: pool_max3x3s2_f32__avx512 (the only AVX-512 pool kernel), whose two-source permute
// and carried valignd lane replace this template's per-tap even/odd loads; the other AVX-512 entries
// of the table are the AVX2 instantiations.
#pragma once

#include <cstdint>

#include "kernels/pool/pool.h"

namespace flexpipe {
namespace {

template <class Vec>
void pool_vmax_vec(float* y, const float* a, const float* b, int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t i = 0;
    for (; i + L <= n; i += L) Vec::store(y + i, Vec::max_fast(Vec::load(b + i), Vec::load(a + i)));
    if (i < n && n >= L) {  // overlapping last vector: max is idempotent, even in place (y == a)
        i = n - L;
        Vec::store(y + i, Vec::max_fast(Vec::load(b + i), Vec::load(a + i)));
        i = n;
    }
    for (; i < n; ++i) y[i] = b[i] > a[i] ? b[i] : a[i];
}

template <class Vec>
void pool_vsum_vec(float* y, const float* a, const float* b, int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t i = 0;
    for (; i + L <= n; i += L) Vec::store(y + i, Vec::add(Vec::load(a + i), Vec::load(b + i)));
    for (; i < n; ++i) y[i] = a[i] + b[i];
}

// The window reduction of the horizontal kernels: m = op(m, next tap), taps in order as in __ref.
template <class Vec>
struct PoolMaxOp {
    using V = typename Vec::V;
    static V v(V m, V x) { return Vec::max_fast(x, m); }
    static float s(float m, float x) { return x > m ? x : m; }
    static V finish(V m, V) { return m; }
    static float finish(float m, float) { return m; }
};
template <class Vec>
struct PoolSumOp {
    using V = typename Vec::V;
    static V v(V m, V x) { return Vec::add(m, x); }
    static float s(float m, float x) { return m + x; }
    static V finish(V m, V scale) { return Vec::mul(m, scale); }
    static float finish(float m, float scale) { return m * scale; }
};

// Outputs o .. o + L - 1 for stride 1: taps are plain unaligned loads.
template <class Vec, class Op>
inline void pool_block_s1(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, typename Vec::V scale) {
    typename Vec::V m = Vec::load(b + o);
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, Vec::load(b + o + t * dilation));
    Vec::store(y + o, Op::finish(m, scale));
}

// Outputs o .. o + L - 1 for stride 2 (reads b[2o .. 2o + 2 L - 1 + (k - 1) * dilation]).
template <class Vec, class Op>
inline void pool_block_s2(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, typename Vec::V scale) {
    const float* p = b + 2 * o;
    typename Vec::V m = Vec::load_evens_raw(p);
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, Vec::load_evens_raw(p + t * dilation));
    Vec::store(y + o, Op::finish(Vec::evens_order(m), scale));
}

// Vector blocks for strides 1 and 2, then scalar outputs. The last block overlaps the previous one
// instead of leaving up to L scalar outputs (recomputed outputs get the same value). Stride 2: a block
// reads one float past the window of its last output, so blocks need o + L < n (the last output's
// window covers that float) and output n - 1 stays scalar.
template <class Vec, class Op>
void pool_horizontal(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation, float scale) {
    constexpr int L = Vec::lanes;
    const typename Vec::V vs = Vec::set1(scale);
    int64_t o = 0;
    if (stride == 1 && n >= L) {
        for (; o + L <= n; o += L) pool_block_s1<Vec, Op>(b, y, o, k, dilation, vs);
        if (o < n) pool_block_s1<Vec, Op>(b, y, n - L, k, dilation, vs);
        o = n;
    } else if (stride == 2 && n >= L + 1) {
        for (; o + L < n; o += L) pool_block_s2<Vec, Op>(b, y, o, k, dilation, vs);
        if (o < n - 1) pool_block_s2<Vec, Op>(b, y, n - L - 1, k, dilation, vs);
        o = n - 1;
    }
    for (; o < n; ++o) {
        const float* w = b + o * stride;
        float m = w[0];
        for (int64_t t = 1; t < k; ++t) m = Op::s(m, w[t * dilation]);
        y[o] = Op::finish(m, scale);
    }
}

// Outputs o .. o + L - 1 of the fused 3x3 stride-2 max (reads r*[2o .. 2o + 2 L + 1]): per tap column,
// the rows reduced in row order, then the taps in column order, in the raw lane order.
template <class Vec>
__attribute__((always_inline)) inline void pool_block_max3x3s2(const float* r0, const float* r1, const float* r2, float* y, int64_t o) {
    using V = typename Vec::V;
    const int64_t c = 2 * o;
    V a[3], b[3], d[3];
    Vec::load_taps_s2_raw(r0 + c, a);
    Vec::load_taps_s2_raw(r1 + c, b);
    Vec::load_taps_s2_raw(r2 + c, d);
    V m = Vec::max_fast(d[0], Vec::max_fast(b[0], a[0]));
    for (int t = 1; t < 3; ++t) m = Vec::max_fast(Vec::max_fast(d[t], Vec::max_fast(b[t], a[t])), m);
    Vec::store(y + o, Vec::evens_order(m));
}

// Blocks of L as the stride-2 horizontal pass: they need o + L < n, the last one overlaps, and output
// n - 1 is scalar.
template <class Vec>
void pool_max3x3s2_vec(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t o = 0;
    if (n >= L + 1) {
        for (; o + L < n; o += L) pool_block_max3x3s2<Vec>(r0, r1, r2, y, o);
        if (o < n - 1) pool_block_max3x3s2<Vec>(r0, r1, r2, y, n - L - 1);
        o = n - 1;
    }
    pool_max3x3s2_f32__ref(r0 + 2 * o, r1 + 2 * o, r2 + 2 * o, y + o, n - o);
}

// Four accumulators of L lanes (4 L partial sums in float, L floats apart), added pairwise, then their
// lanes summed in double.
template <class Vec>
double pool_sum_vec(const float* x, int64_t n) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    V s0 = Vec::zero(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 4 * L <= n; i += 4 * L) {
        s0 = Vec::add(s0, Vec::load(x + i));
        s1 = Vec::add(s1, Vec::load(x + i + L));
        s2 = Vec::add(s2, Vec::load(x + i + 2 * L));
        s3 = Vec::add(s3, Vec::load(x + i + 3 * L));
    }
    for (; i + L <= n; i += L) s0 = Vec::add(s0, Vec::load(x + i));
    double s = Vec::hsum_double(Vec::add(Vec::add(s0, s1), Vec::add(s2, s3)));
    for (; i < n; ++i) s += x[i];
    return s;
}

template <class Vec>
float pool_max_vec(const float* x, int64_t n) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    int64_t i = 0;
    float m = x[0];
    if (n >= L) {
        V m0 = Vec::load(x), m1 = m0;
        for (i = L; i + 2 * L <= n; i += 2 * L) {
            m0 = Vec::max_fast(Vec::load(x + i), m0);
            m1 = Vec::max_fast(Vec::load(x + i + L), m1);
        }
        for (; i + L <= n; i += L) m0 = Vec::max_fast(Vec::load(x + i), m0);
        m = Vec::hmax(Vec::max_fast(m0, m1));
    } else {
        i = 1;
    }
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

}  // namespace
}  // namespace flexpipe
