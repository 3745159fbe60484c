// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution (depthwise.h) written once over a vector type (simd/vec.h): L = Vec::lanes
// output columns per step; depthwise_f32_3x3__avx2 (L = 8) and __neon (L = 4) instantiate it.
//
// Small planes (MobileNet's 7x7 to 112x112) go through a zero-padded copy of the plane on the stack
// (depthwise_padded.h): every output column is then an interior one (no bounds checks, no scalar border
// pixels, which on a 7x7 plane were all of them), at the price of copying the input once, and stride 1
// computes two output rows per step from four input rows loaded once. Larger planes, where borders are a
// small share of the row, vectorize the interior in place and compute the borders like __ref.
// One partial sum per kernel row (three short FMA chains instead of one of nine), summed at the end.
//
// Kept specialised (own files, not this template): depthwise_f32_3x3__avx512, which reads planes of at
// most 16 columns in place with write-masked FMAs, lane shifts (valignd) and 16x16 transposes across
// channels, none of which the other ISAs have as single instructions (as a Vec template it would be
// the padded-copy path above, which that kernel exists to beat on 7x7 and 14x14 planes); and AVX2's
// stride-2 split-plane layout (depthwise_f32_3x3__avx2.cc), whose column-parity split is two shuffles
// and two lane permutes per 8 floats, where NEON's de-interleaving load (load_taps_s2) needs no split.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/macros.h"
#include "kernels/depthwise/depthwise_padded.h"

namespace flexpipe {
namespace {

// One output pixel with bounds-checked taps (borders and the row remainder); rows[ky] is null for
// input rows outside the image.
inline float dw_pixel(const DepthwiseShape& s, const float* const* rows, const float* wc, float b, int64_t ox) {
    float acc = b;
    for (int ky = 0; ky < 3; ++ky) {
        if (!rows[ky]) continue;
        for (int kx = 0; kx < 3; ++kx) {
            const int64_t ix = ox * s.stride - s.pad_left + kx;
            if (ix >= 0 && ix < s.w) acc += wc[ky * 3 + kx] * rows[ky][ix];
        }
    }
    return acc;
}

// Channel p % channels of a layer: its 3x3 weights wc, bias b, and the weights broadcast (wv[ky * 3 + kx]).
template <class Vec>
struct DwTaps {
    const float* wc;
    float b;
    typename Vec::V wv[9];

    DwTaps(const DepthwiseShape& s, const float* w, const float* bias, int64_t p) {
        const int64_t c = p % s.channels;
        wc = w + c * 9;
        b = bias ? bias[c] : 0.0f;
        for (int i = 0; i < 9; ++i) wv[i] = Vec::set1(wc[i]);
    }
};

inline float dw_clamp(float v, const ConvActivation& act) {
    return act.clamp ? (v < act.lo ? act.lo : (v > act.hi ? act.hi : v)) : v;
}

// L outputs from input rows in[0..2], each read from its element 0 on (stride 1: L + 2 floats, stride 2:
// 2 L + 1); a null row is padding and contributes nothing.
template <class Vec>
inline typename Vec::V dw_step(const float* const* in, int64_t stride, const typename Vec::V* wv, float b) {
    using V = typename Vec::V;
    V part[3] = {Vec::set1(b), Vec::zero(), Vec::zero()};
    for (int ky = 0; ky < 3; ++ky) {
        const float* r = in[ky];
        if (!r) continue;
        V t[3];
        if (stride == 1) {
            t[0] = Vec::load(r);
            t[1] = Vec::load(r + 1);
            t[2] = Vec::load(r + 2);
        } else {
            Vec::load_taps_s2(r, t);
        }
        part[ky] = Vec::fma(wv[ky * 3], t[0], part[ky]);
        part[ky] = Vec::fma(wv[ky * 3 + 1], t[1], part[ky]);
        part[ky] = Vec::fma(wv[ky * 3 + 2], t[2], part[ky]);
    }
    return Vec::add(Vec::add(part[0], part[1]), part[2]);
}

// Stride 1: L outputs of two consecutive rows from scratch rows r0 .. r0 + 3. Each input row is loaded
// once for both output rows (12 loads for 18 FMAs instead of 18).
template <class Vec>
inline void dw_step2(const float* r0, int64_t cols, int64_t first, const typename Vec::V* wv, float b,
                     typename Vec::V* top, typename Vec::V* bottom) {
    using V = typename Vec::V;
    V t[3] = {Vec::set1(b), Vec::zero(), Vec::zero()};
    V u[3] = {Vec::set1(b), Vec::zero(), Vec::zero()};
    for (int iy = 0; iy < 4; ++iy) {
        const float* r = r0 + iy * cols + first;
        const V x0 = Vec::load(r), x1 = Vec::load(r + 1), x2 = Vec::load(r + 2);
        if (iy < 3) {  // kernel row iy of the top output row
            t[iy] = Vec::fma(wv[iy * 3], x0, t[iy]);
            t[iy] = Vec::fma(wv[iy * 3 + 1], x1, t[iy]);
            t[iy] = Vec::fma(wv[iy * 3 + 2], x2, t[iy]);
        }
        if (iy > 0) {  // kernel row iy - 1 of the bottom one
            const int ky = iy - 1;
            u[ky] = Vec::fma(wv[ky * 3], x0, u[ky]);
            u[ky] = Vec::fma(wv[ky * 3 + 1], x1, u[ky]);
            u[ky] = Vec::fma(wv[ky * 3 + 2], x2, u[ky]);
        }
    }
    *top = Vec::add(Vec::add(t[0], t[1]), t[2]);
    *bottom = Vec::add(Vec::add(u[0], u[1]), u[2]);
}

// Copies row src (w floats) to dst in L-float steps, the last one overlapping, so only dst[0, w) is
// written; a row narrower than L is one load_first and one store that also writes zeros to dst[w, L)
// (the scratch's right padding, which must be zero anyway).
template <class Vec>
inline void dw_copy_row(float* dst, const float* src, int64_t w) {
    constexpr int L = Vec::lanes;
    if (w < L) {
        if (w > 0) Vec::store(dst, Vec::load_first(src, w));
        return;
    }
    for (int64_t i = 0; i + L <= w; i += L) Vec::store(dst + i, Vec::load(src + i));
    if (w % L) Vec::store(dst + w - L, Vec::load(src + w - L));
}

// Stores the L outputs of row oy of plane yp at column at, clamped; a row narrower than L spills into
// the following rows of the plane, which are computed (and rewritten) later, so only the plane's tail
// goes through a small buffer.
template <class Vec>
inline void dw_store_step(const DepthwiseShape& s, float* yp, int64_t oy, int64_t at, typename Vec::V acc, bool clamp,
                          typename Vec::V vlo, typename Vec::V vhi) {
    constexpr int L = Vec::lanes;
    if (clamp) acc = Vec::clamp(acc, vlo, vhi);  // NaN stays NaN
    float* yr = yp + oy * s.ow;
    if (padded_store_whole<L>(s, oy, at)) {
        Vec::store(yr + at, acc);
    } else {
        float lanes[L];
        Vec::store(lanes, acc);
        for (int64_t i = 0; i < s.ow; ++i) yr[i] = lanes[i];
    }
}

template <class Vec>
void dw_padded(const DepthwiseShape& s, const PaddedPlane& g, const float* x, const float* w, const float* bias,
               float* y, const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    using V = typename Vec::V;
    alignas(alignof(V)) float pad[PaddedPlane::capacity];
    std::memset(pad, 0, static_cast<size_t>(g.rows * g.cols) * sizeof(float));
    const V vlo = Vec::set1(act.lo), vhi = Vec::set1(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        padded_copy_in(s, g, x + p * s.h * s.w, pad, dw_copy_row<Vec>);
        const DwTaps<Vec> t(s, w, bias, p);
        const V* wv = t.wv;
        const float b = t.b;
        float* yp = y + p * depthwise_y_plane(s);
        auto store = [&](int64_t oy, int64_t at, V acc) { dw_store_step<Vec>(s, yp, oy, at, acc, act.clamp, vlo, vhi); };
        padded_rows<Vec::lanes>(
            s, g, pad,
            [&](const float* r0, int64_t oy, int64_t at) {
                V top, bottom;
                dw_step2<Vec>(r0, g.cols, at, wv, b, &top, &bottom);
                store(oy, at, top);
                store(oy + 1, at, bottom);
            },
            [&](const float* r0, int64_t oy, int64_t at) {
                const int64_t first = at * s.stride;
                const float* in[3] = {r0 + first, r0 + g.cols + first, r0 + 2 * g.cols + first};
                store(oy, at, dw_step<Vec>(in, s.stride, wv, b));
            });
    }
}

// Planes that fit go through the padded copy; larger ones vectorize the interior in place, in steps of L,
// and compute the borders like __ref.
template <class Vec>
void depthwise_3x3_vec(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                       const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    const PaddedPlane g = padded_plane<L>(s);
    if (g.rows > 0) {
        dw_padded<Vec>(s, g, x, w, bias, y, act, plane_begin, plane_end);
        return;
    }
    int64_t lo, hi;
    depthwise_interior(s, &lo, &hi);
    const V vlo = Vec::set1(act.lo), vhi = Vec::set1(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const float* xp = x + p * s.h * s.w;
        const DwTaps<Vec> t(s, w, bias, p);
        const float* wc = t.wc;
        const float b = t.b;
        const V* wv = t.wv;
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            const float* rows[3];
            for (int ky = 0; ky < 3; ++ky) {
                const int64_t iy = oy * s.stride - s.pad_top + ky;
                rows[ky] = iy >= 0 && iy < s.h ? xp + iy * s.w : nullptr;
            }
            float* yr = y + p * depthwise_y_plane(s) + oy * s.ow;
            for (int64_t ox = 0; ox < lo; ++ox) yr[ox] = dw_clamp(dw_pixel(s, rows, wc, b, ox), act);
            // Interior in steps of L; the last step overlaps the previous one (outputs are written, not
            // accumulated, so recomputing a few is harmless) instead of a scalar tail.
            for (int64_t ox = lo; ox < hi; ox += L) {
                if (ox + L > hi) {
                    if (hi - lo < L) {
                        for (; ox < hi; ++ox) yr[ox] = dw_clamp(dw_pixel(s, rows, wc, b, ox), act);
                        break;
                    }
                    ox = hi - L;
                }
                const int64_t at = ox * s.stride - s.pad_left;
                const float* in[3] = {rows[0] ? rows[0] + at : nullptr, rows[1] ? rows[1] + at : nullptr,
                                      rows[2] ? rows[2] + at : nullptr};
                V acc = dw_step<Vec>(in, s.stride, wv, b);
                if (act.clamp) acc = Vec::clamp(acc, vlo, vhi);  // NaN stays NaN
                Vec::store(yr + ox, acc);
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) yr[ox] = dw_clamp(dw_pixel(s, rows, wc, b, ox), act);
        }
    }
}

}  // namespace
}  // namespace flexpipe
