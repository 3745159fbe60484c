// SPDX-License-Identifier: Apache-2.0
// The gather, lerp and blend row micro-kernels of the specialised Resize paths (contract in resize.h),
// written once over a vector type (simd/vec.h): Vec::gather is vgatherdps on AVX2 and lane loads on NEON.
// lerp and blend are one multiply and one FMA per L outputs (x0 w0 + (x1 w1), rounded as __ref's float
// expression fused once). Replicate's fast cases, permutes of one loaded vector that each ISA spells
// differently (vpermps tables, NEON zips and dups), stay in each ISA's file and are passed in.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/resize/resize.h"

namespace flexpipe {
namespace {

// y[j s + r] = x[j]: s == 1 is a copy; small(x, y, n, s) handles the factors its ISA permutes and returns
// the inputs it replicated, or -1 for other factors, which store one broadcast s / L times per input.
template <class Vec, typename Small>
void resize_rep_vec(const float* x, float* y, int64_t n, int64_t s, Small small) {
    constexpr int L = Vec::lanes;
    if (s == 1) {
        std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
        return;
    }
    int64_t j = small(x, y, n, s);
    if (j < 0) {
        for (j = 0; j < n; ++j) {
            const typename Vec::V v = Vec::set1(x[j]);
            float* out = y + j * s;
            int64_t r = 0;
            for (; r + L <= s; r += L) Vec::store(out + r, v);
            for (; r < s; ++r) out[r] = x[j];
        }
    }
    for (; j < n; ++j)
        for (int64_t r = 0; r < s; ++r) y[j * s + r] = x[j];
}

template <class Vec>
void resize_gather_vec(const float* x, const int32_t* idx, float* y, int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t o = 0;
    for (; o + L <= n; o += L) Vec::store(y + o, Vec::gather(x, idx + o));
    for (; o < n; ++o) y[o] = x[idx[o]];
}

template <class Vec>
void resize_lerp_vec(const float* x, const int32_t* i0, const int32_t* i1, const float* w0, const float* w1, float* y,
                     int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t o = 0;
    for (; o + L <= n; o += L) {
        const typename Vec::V b = Vec::mul(Vec::gather(x, i1 + o), Vec::load(w1 + o));
        Vec::store(y + o, Vec::fma(Vec::gather(x, i0 + o), Vec::load(w0 + o), b));
    }
    for (; o < n; ++o) y[o] = x[i0[o]] * w0[o] + x[i1[o]] * w1[o];
}

template <class Vec>
void resize_blend_vec(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    constexpr int L = Vec::lanes;
    const typename Vec::V va = Vec::set1(wa), vb = Vec::set1(wb);
    int64_t o = 0;
    for (; o + L <= n; o += L) Vec::store(y + o, Vec::fma(Vec::load(a + o), va, Vec::mul(Vec::load(b + o), vb)));
    for (; o < n; ++o) y[o] = a[o] * wa + b[o] * wb;
}

}  // namespace
}  // namespace flexpipe
