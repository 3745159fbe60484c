// SPDX-License-Identifier: Apache-2.0
// Grouped convolution (grouped.h) written once over a vector type (simd/vec.h): L = Vec::lanes output
// columns per vector; the AVX2, AVX-512 and NEON files instantiate it.
//
// A call first zeroes its scratch's input rows and writes the taps' offset table (tap (c, ky, kx):
// channel c's rows, kernel row ky * d, column kx * d; stride 2: the half of kx * d's parity at
// index kx * d / 2). A work item (image, group, band of output rows) copies the input rows its band
// reads, of the group's cg channels, between the zeros (stride 2: each row's even columns, then its odd
// ones), so that every tap of every output column is a plain load at its table offset. Then, per output
// row, per tile of MT output channels, per step of NV vectors of output columns: MT x NV accumulators
// start at the bias and take the K taps (per tap NV loads, MT broadcast weights, neighbours in the
// packed filter, MT x NV FMAs), are clamped and stored once. Tiles: 16, 8, 4, 2, 1 channels as mg
// decomposes (8 at most with 16 vector registers); steps: NV = 4, 2, 1 as the row allows and the
// registers hold (MT x NV <= 16 accumulators with 32 vector registers, <= 8 with 16); a row's last
// columns by one vector overlapping the step before (outputs are written, not accumulated), a row
// narrower than L by one vector stored through Vec::store_first.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/conv/channel_lanes_impl.h"
#include "kernels/grouped/grouped.h"

namespace flexpipe {
namespace {

template <class Vec>
struct GroupedRegs {
    // Accumulators one step may hold: 32-byte vectors are AVX2's 16 registers, the others have 32.
    static constexpr int budget = sizeof(typename Vec::V) == 32 ? 8 : 16;
};

// The size of the output-channel tile at m0 (the same decomposition packs and computes).
template <class Vec>
inline int grouped_tile(int64_t left) {
    constexpr int top = GroupedRegs<Vec>::budget;
    return left >= top ? top : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

// Where one row of steps of one tile reads and writes.
struct GroupedRow {
    const float* in = nullptr;    // scratch: this output row's input at tap offset 0
    const int64_t* offs = nullptr;  // per tap (c, ky, kx): its offset from `in` + the output column
    int64_t taps = 0;             // cg * kh * kw
    const float* w = nullptr;     // the tile's first output channel in the packed filter [K][mg]
    int64_t mg = 0;               // floats from one tap's weights to the next
    const float* bias = nullptr;  // the tile's first bias, or null
    float* y = nullptr;           // the tile's first output channel, at this output row
    int64_t out_plane = 0;
};

// MT channels x NV vectors of output columns from column `at`; a row narrower than L stores its
// `valid` lanes (valid = L otherwise).
template <class Vec, int MT, int NV>
inline void grouped_step(const GroupedRow& r, int64_t at, int64_t valid, const ConvActivation& act) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    // Every loop over t and j unrolled: an accumulator indexed at run time would live on the stack.
    V acc[MT][NV];
#pragma GCC unroll 16
    for (int t = 0; t < MT; ++t) {
        const V b = r.bias ? Vec::set1(r.bias[t]) : Vec::zero();
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[t][j] = b;
    }
    const float* base = r.in + at;
    const float* wp = r.w;
    for (int64_t i = 0; i < r.taps; ++i, wp += r.mg) {
        const float* p = base + r.offs[i];
        V xv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) xv[j] = Vec::load(p + j * L);
#pragma GCC unroll 16
        for (int t = 0; t < MT; ++t) {
            const V wv = Vec::load1(wp + t);
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[t][j] = Vec::fma(wv, xv[j], acc[t][j]);
        }
    }
    const V lo = Vec::set1(act.lo), hi = Vec::set1(act.hi);
#pragma GCC unroll 16
    for (int t = 0; t < MT; ++t) {
        float* yt = r.y + t * r.out_plane + at;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            V v = acc[t][j];
            if (act.clamp) v = Vec::clamp(v, lo, hi);  // NaN stays NaN
            if (valid < L) Vec::store_first(yt, valid, v);
            else Vec::store(yt + j * L, v);
        }
    }
}

// One output row of one tile of MT channels.
template <class Vec, int MT>
inline void grouped_row(int64_t ow, const GroupedRow& r, const ConvActivation& act) {
    constexpr int L = Vec::lanes;
    constexpr int wide = GroupedRegs<Vec>::budget / MT;  // vectors per step the registers hold
    if (ow < L) {
        grouped_step<Vec, MT, 1>(r, 0, ow, act);
        return;
    }
    int64_t ox = 0;
    if constexpr (wide >= 4)
        for (; ox + 4 * L <= ow; ox += 4 * L) grouped_step<Vec, MT, 4>(r, ox, L, act);
    if constexpr (wide >= 2)
        for (; ox + 2 * L <= ow; ox += 2 * L) grouped_step<Vec, MT, 2>(r, ox, L, act);
    for (; ox < ow; ox += L) grouped_step<Vec, MT, 1>(r, ox + L <= ow ? ox : ow - L, L, act);
}

template <class Vec>
inline void grouped_row_tiles(const GroupedShape& s, GroupedRow r, const ConvActivation& act) {
    const float* w0 = r.w;
    const float* b0 = r.bias;
    float* y0 = r.y;
    for (int64_t m0 = 0; m0 < s.mg;) {
        const int mt = grouped_tile<Vec>(s.mg - m0);
        r.w = w0 + m0;
        r.bias = b0 ? b0 + m0 : nullptr;
        r.y = y0 + m0 * r.out_plane;
        switch (mt) {
            case 16: grouped_row<Vec, (GroupedRegs<Vec>::budget >= 16 ? 16 : 8)>(s.ow, r, act); break;
            case 8: grouped_row<Vec, 8>(s.ow, r, act); break;
            case 4: grouped_row<Vec, 4>(s.ow, r, act); break;
            case 2: grouped_row<Vec, 2>(s.ow, r, act); break;
            default: grouped_row<Vec, 1>(s.ow, r, act); break;
        }
        m0 += mt;
    }
}

// Input rows [iy0, iy0 + in_rows) of the group's channels into `in`, whose padding is zero from the
// call's first memset: a row inside the input is copied to columns [pad_left, pad_left + w) (split: into
// `row`, then its even and odd columns into the two halves, all of them), a row outside is zeroed (a
// band before may have left one there). The pixel steps of stride 2 read split rows; the channel steps
// and stride 1 read rows as they are.
template <class Vec>
inline void grouped_fill(const GroupedShape& s, const GroupedGeometry& g, const float* xg, int64_t iy0, bool split,
                         float* in, float* row) {
    constexpr int L = Vec::lanes;
    const int64_t half = g.cols / 2;
    for (int64_t c = 0; c < s.cg; ++c) {
        const float* xc = xg + c * s.h * s.w;
        for (int64_t r = 0; r < g.in_rows; ++r) {
            float* dst = in + (c * g.in_rows + r) * g.cols;
            const int64_t iy = iy0 + r;
            if (iy < 0 || iy >= s.h) {
                std::memset(dst, 0, static_cast<size_t>(g.cols) * sizeof(float));
                continue;
            }
            if (!split) {
                std::memcpy(dst + s.pad_left, xc + iy * s.w, static_cast<size_t>(s.w) * sizeof(float));
                continue;
            }
            std::memcpy(row + s.pad_left, xc + iy * s.w, static_cast<size_t>(s.w) * sizeof(float));
            // half is a multiple of 16 >= L: whole vectors; load_evens reads row[2 i, 2 i + 2 L - 1).
            for (int64_t i = 0; i < half; i += L) {
                Vec::store(dst + i, Vec::load_evens(row + 2 * i));
                if (2 * i + 2 * L < g.cols) {
                    Vec::store(dst + half + i, Vec::load_evens(row + 2 * i + 1));
                } else {  // the last odd vector would read one float past the row
                    for (int64_t j = 0; j < L; ++j) dst[half + i + j] = row[2 * (i + j) + 1];
                }
            }
        }
    }
}

// Channels in the lanes: L output channels (a vector of the packed filter, whose taps hold a group's mg
// channels side by side) x up to L output pixels, flat over the band's rows, per step; per tap one
// weight vector and one broadcast input value per pixel, one FMA each. The accumulators are transposed
// and stored as consecutive pixels of each channel's plane (the last step of a band through
// Vec::store_first, with only as many accumulators as its pixels round up to a power of two). No lane
// idles at a row's end, and the input rows need no even/odd split at stride 2. A step is L dependent
// FMA chains, which hide the FMA latency on two pipes with 16 lanes (AVX-512), just about with 8 (AVX2)
// and not with 4 (NEON); the pixel steps keep up to 16 accumulators. So (grouped_channels_apply):
// 16 lanes take this path for every row that is not a whole number of vectors; 8 lanes for such rows at
// stride 2 (the split copy costs more than the chains lose) and rows of at most 4 columns; 4 lanes for
// rows of at most 2 columns. Measured in bench:kernels conv (rgx*), AVX2 at stride 1, 7x7 and 14x14:
// this path 10% slower than the pixel steps.
template <class Vec>
inline bool grouped_channels_apply(const GroupedShape& s) {
    constexpr int L = Vec::lanes;
    if (s.mg % L != 0 || s.ow % L == 0) return false;
    if constexpr (L >= 16) return true;
    else if constexpr (L >= 8) return s.stride == 2 || 2 * s.ow <= L;
    else return 2 * s.ow <= L;
}

// NP pixels (NP <= L; base[j] their input offsets) of L channels from `b` (the bias) into acc[0, NP),
// acc[NP, L) set to `b`.
template <class Vec, int NP>
inline void grouped_channel_step(const float* in, const int64_t* offs, int64_t taps, const float* wp, int64_t mg,
                                 const int64_t* base, typename Vec::V b, typename Vec::V (&acc)[Vec::lanes]) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    V a[NP];
#pragma GCC unroll 16
    for (int j = 0; j < NP; ++j) a[j] = b;
    for (int64_t i = 0; i < taps; ++i, wp += mg) {
        const V wv = Vec::load(wp);
        const float* src = in + offs[i];
#pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) a[j] = Vec::fma(Vec::load1(src + base[j]), wv, a[j]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < L; ++j) acc[j] = j < NP ? a[j] : b;
}

// The step for n pixels (1 <= n <= NP) with the fewest accumulators: NP halved while n still fits.
template <class Vec, int NP>
inline void grouped_channel_step_upto(int64_t n, const float* in, const int64_t* offs, int64_t taps, const float* wp,
                                      int64_t mg, const int64_t* base, typename Vec::V b,
                                      typename Vec::V (&acc)[Vec::lanes]) {
    if constexpr (NP > 1) {
        if (n <= NP / 2) return grouped_channel_step_upto<Vec, NP / 2>(n, in, offs, taps, wp, mg, base, b, acc);
    }
    grouped_channel_step<Vec, NP>(in, offs, taps, wp, mg, base, b, acc);
}

template <class Vec>
inline void grouped_channel_steps(const GroupedShape& s, const GroupedGeometry& g, const float* in, const int64_t* offs,
                                  int64_t taps, const float* wg, const float* bg, float* yg, int64_t oy0, int64_t oy1,
                                  const ConvActivation& act) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const int64_t out_plane = s.oh * s.ow, p0 = oy0 * s.ow, p1 = oy1 * s.ow;
    for (int64_t m0 = 0; m0 < s.mg; m0 += L) {
        const V b = bg ? Vec::load(bg + m0) : Vec::zero();
        int64_t qy = 0, qx = 0;  // pixel p as (row - oy0, column), counted: a division per pixel costs more than its FMAs
        for (int64_t p = p0; p < p1; p += L) {
            const int64_t n = p1 - p < L ? p1 - p : L;
            int64_t base[L];
            for (int j = 0; j < L; ++j) {  // a short last step repeats its last pixel
                base[j] = (qy * g.cols + qx) * s.stride;
                if (j + 1 < n && ++qx == s.ow) qx = 0, ++qy;
            }
            if (++qx == s.ow) qx = 0, ++qy;  // on to pixel p + L
            V acc[L];
            grouped_channel_step_upto<Vec, L>(n, in, offs, taps, wg + m0, s.mg, base, b, acc);
            store_channel_lanes<Vec>(acc, yg + m0 * out_plane + p, out_plane, n, act);
        }
    }
}

template <class Vec>
void grouped_conv_vec(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                      const ConvActivation& act, float* scratch, int64_t item_begin, int64_t item_end) {
    const GroupedGeometry g = grouped_geometry(s);
    const int64_t K = s.cg * s.kh * s.kw, out_plane = s.oh * s.ow, half = g.cols / 2;
    int64_t* offs = reinterpret_cast<int64_t*>(scratch);
    float* in = scratch + g.offset_floats;
    float* row = in + s.cg * g.in_rows * g.cols;
    std::memset(in, 0, static_cast<size_t>(g.scratch_floats - g.offset_floats) * sizeof(float));
    const bool channels = grouped_channels_apply<Vec>(s), split = s.stride != 1 && !channels;
    for (int64_t c = 0, i = 0; c < s.cg; ++c)
        for (int64_t ky = 0; ky < s.kh; ++ky)
            for (int64_t kx = 0; kx < s.kw; ++kx, ++i) {
                const int64_t dx = kx * s.dilation;
                offs[i] = c * g.in_rows * g.cols + ky * s.dilation * g.cols + (split ? (dx & 1) * half + (dx >> 1) : dx);
            }
    for (int64_t item = item_begin; item < item_end; ++item) {
        const int64_t ng = item / g.bands, band = item % g.bands;  // ng = n * groups + group
        const int64_t grp = ng % s.groups;
        const int64_t oy0 = band * g.band_rows, oy1 = oy0 + g.band_rows < s.oh ? oy0 + g.band_rows : s.oh;
        grouped_fill<Vec>(s, g, x + ng * s.cg * s.h * s.w, oy0 * s.stride - s.pad_top, split, in, row);
        if (channels) {
            grouped_channel_steps<Vec>(s, g, in, offs, K, w + grp * K * s.mg, bias ? bias + grp * s.mg : nullptr,
                                       y + ng * s.mg * out_plane, oy0, oy1, act);
            continue;
        }
        for (int64_t oy = oy0; oy < oy1; ++oy) {
            GroupedRow r;
            r.in = in + (oy - oy0) * s.stride * g.cols;
            r.offs = offs;
            r.taps = K;
            r.w = w + grp * K * s.mg;
            r.mg = s.mg;
            r.bias = bias ? bias + grp * s.mg : nullptr;
            r.y = y + ng * s.mg * out_plane + oy * s.ow;
            r.out_plane = out_plane;
            grouped_row_tiles<Vec>(s, r, act);
        }
    }
}

}  // namespace
}  // namespace flexpipe
