// SPDX-License-Identifier: Apache-2.0
// One LayerNormalization row (norm.h, layernorm_row_f32__ref's contract) written once over a vector type
// (simd/vec.h): layernorm_row_f32__<isa> is layernorm_row_vec<Vec<isa>>.
//
// Pass 1 sums x in four double-lane accumulators (Vec::D; a large common offset costs nothing) and rounds
// the mean to float as the ref rounds it; pass 2 sums (x - mean)^2 in four float vector accumulators;
// inv_std = 1 / sqrt(var + eps) in double, rounded to float; pass 3 is y = (x - mean) * inv * w + b in the
// ref's operation order. Partial last vectors read and write only their lanes (load_first / store_first).
#pragma once

#include <cmath>
#include <cstdint>

#include "common/macros.h"
#include "kernels/norm/norm.h"

namespace flexpipe {
namespace {

template <class Vec>
void layernorm_row_vec(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b, int64_t b_n,
                       float epsilon, float* mean_out, float* inv_std_out) {
    using V = typename Vec::V;
    using D = typename Vec::D;
    constexpr int L = Vec::lanes;
    FLEXPIPE_DCHECK(n >= 1 && (w_n == n || w_n == 1) && (b == nullptr || b_n == n || b_n == 1));
    D s0 = Vec::dzero(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        const V a = Vec::load(x + i), c = Vec::load(x + i + L);
        s0 = Vec::dadd_low(s0, a);
        s1 = Vec::dadd_high(s1, a);
        s2 = Vec::dadd_low(s2, c);
        s3 = Vec::dadd_high(s3, c);
    }
    for (; i < n; i += L) {
        const V a = Vec::load_first(x + i, n - i < L ? n - i : L);
        s0 = Vec::dadd_low(s0, a);
        s1 = Vec::dadd_high(s1, a);
    }
    const double sum = Vec::dsum(Vec::dadd(Vec::dadd(s0, s1), Vec::dadd(s2, s3)));
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const V m = Vec::set1(mean);
    V q[4] = {Vec::zero(), Vec::zero(), Vec::zero(), Vec::zero()};
    for (i = 0; i + 4 * L <= n; i += 4 * L) {
        for (int k = 0; k < 4; ++k) {
            const V d = Vec::sub(Vec::load(x + i + L * k), m);
            q[k] = Vec::fma(d, d, q[k]);
        }
    }
    for (; i + L <= n; i += L) {
        const V d = Vec::sub(Vec::load(x + i), m);
        q[0] = Vec::fma(d, d, q[0]);
    }
    if (i < n) {
        const V d = Vec::select(Vec::first_lanes(n - i), Vec::sub(Vec::load_first(x + i, n - i), m), Vec::zero());
        q[0] = Vec::fma(d, d, q[0]);
    }
    const double var = Vec::hsum(Vec::add(Vec::add(q[0], q[1]), Vec::add(q[2], q[3]))) / static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
    const V vi = Vec::set1(inv), w1 = Vec::set1(w[0]), b1 = Vec::set1(b ? b[0] : 0.0f);
    const bool wd = w_n != 1, bd = b != nullptr && b_n != 1;
    for (i = 0; i + L <= n; i += L) {
        V v = Vec::mul(Vec::mul(Vec::sub(Vec::load(x + i), m), vi), wd ? Vec::load(w + i) : w1);
        if (b) v = Vec::add(v, bd ? Vec::load(b + i) : b1);
        Vec::store(y + i, v);
    }
    if (i < n) {
        const int64_t t = n - i;
        V v = Vec::mul(Vec::mul(Vec::sub(Vec::load_first(x + i, t), m), vi), wd ? Vec::load_first(w + i, t) : w1);
        if (b) v = Vec::add(v, bd ? Vec::load_first(b + i, t) : b1);
        Vec::store_first(y + i, t, v);
    }
    if (mean_out) *mean_out = mean;
    if (inv_std_out) *inv_std_out = inv;
}

}  // namespace
}  // namespace flexpipe
