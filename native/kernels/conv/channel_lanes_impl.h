// SPDX-License-Identifier: Apache-2.0
// The load and store of the channels-in-lanes paths of small planes (depthwise_kxk_impl.h,
// grouped_impl.h), written once over a vector type (simd/vec.h). Store: L accumulators, acc[j] the L
// channels of output pixel j, are transposed so that acc[c] holds channel c's L consecutive pixels,
// clamped (the fused activation) and stored: pixels [0, n) of channel c at dst + c * plane (n < L through
// Vec::store_first). Load: the reverse, L planes' pixels [i, i + n) as px[j] = the L channels of pixel
// i + j, by L vector loads and one transpose instead of L x L scalar moves.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {
namespace {

template <class Vec>
inline void store_channel_lanes(typename Vec::V (&acc)[Vec::lanes], float* dst, int64_t plane, int64_t n,
                                const ConvActivation& act) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const V lo = Vec::set1(act.lo), hi = Vec::set1(act.hi);
    Vec::transpose(acc);
#pragma GCC unroll 16
    for (int c = 0; c < L; ++c) {
        V v = acc[c];
        if (act.clamp) v = Vec::clamp(v, lo, hi);  // NaN stays NaN
        if (n == L) Vec::store(dst + c * plane, v);
        else Vec::store_first(dst + c * plane, n, v);
    }
}

template <class Vec>
inline void load_channel_lanes(const float* src, int64_t plane, int64_t n, typename Vec::V (&px)[Vec::lanes]) {
    constexpr int L = Vec::lanes;
#pragma GCC unroll 16
    for (int c = 0; c < L; ++c) px[c] = n == L ? Vec::load(src + c * plane) : Vec::load_first(src + c * plane, n);
    Vec::transpose(px);
}

}  // namespace
}  // namespace flexpipe
