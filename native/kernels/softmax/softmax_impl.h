// SPDX-License-Identifier: Apache-2.0
// Softmax over a dense vector (softmax.h) written once over a vector type with its vector math
// (VecMath<Vec>, vmath_impl.h): softmax_f32__<isa> is softmax_vec<VecMath<Vec<isa>>>; strided vectors and
// vectors shorter than one register run __ref.
//
// max in two accumulators (Vec::max skips a NaN element, as the ref's `x > m ? x : m`; the last
// partial vector overlaps the previous one), y = exp(x - max) summed in four float vector accumulators
// (4 L lanes), then y *= 1 / sum. The partial last vector reads and writes only its lanes
// (load_first / store_first).
#pragma once

#include <cmath>
#include <cstdint>

#include "common/macros.h"
#include "kernels/softmax/softmax.h"

namespace flexpipe {
namespace {

template <class Vec>
void softmax_vec(const float* x, float* y, int64_t n, int64_t stride) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    FLEXPIPE_DCHECK(n >= 0 && stride >= 1);
    if (stride != 1 || n < L) return softmax_f32__ref(x, y, n, stride);
    const V ninf = Vec::set1(-INFINITY);
    V m0 = ninf, m1 = ninf;
    int64_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        m0 = Vec::max(Vec::load(x + i), m0);
        m1 = Vec::max(Vec::load(x + i + L), m1);
    }
    for (; i + L <= n; i += L) m0 = Vec::max(Vec::load(x + i), m0);
    if (i < n) m1 = Vec::max(Vec::load(x + n - L), m1);  // overlapping last L (n >= L)
    const V m = Vec::set1(Vec::hmax(Vec::max(m0, m1)));
    V acc[4] = {Vec::zero(), Vec::zero(), Vec::zero(), Vec::zero()};
    for (i = 0; i + 4 * L <= n; i += 4 * L) {
        for (int k = 0; k < 4; ++k) {
            const V e = Vec::exp(Vec::sub(Vec::load(x + i + L * k), m));
            Vec::store(y + i + L * k, e);
            acc[k] = Vec::add(acc[k], e);
        }
    }
    for (; i + L <= n; i += L) {
        const V e = Vec::exp(Vec::sub(Vec::load(x + i), m));
        Vec::store(y + i, e);
        acc[0] = Vec::add(acc[0], e);
    }
    if (i < n) {
        const V e = Vec::select(Vec::first_lanes(n - i), Vec::exp(Vec::sub(Vec::load_first(x + i, n - i), m)), Vec::zero());
        Vec::store_first(y + i, n - i, e);
        acc[0] = Vec::add(acc[0], e);
    }
    const float sum = Vec::hsum(Vec::add(Vec::add(acc[0], acc[1]), Vec::add(acc[2], acc[3])));
    const V inv = Vec::set1(static_cast<float>(1.0 / static_cast<double>(sum)));
    for (i = 0; i + L <= n; i += L) Vec::store(y + i, Vec::mul(Vec::load(y + i), inv));
    if (i < n) Vec::store_first(y + i, n - i, Vec::mul(Vec::load_first(y + i, n - i), inv));
}

}  // namespace
}  // namespace flexpipe
