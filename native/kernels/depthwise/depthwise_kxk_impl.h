// SPDX-License-Identifier: Apache-2.0
// Depthwise kh x kw convolution with dilation (depthwise.h, depthwise_kxk) written once over a vector
// type (simd/vec.h): L = Vec::lanes output columns per step; the AVX2, AVX-512 and NEON files instantiate it.
//
// A plane whose zero-padded copy fits on the stack (KxkPlane::capacity floats: MobileNetV3's and
// EfficientNet's 5x5 layers up to 112x112, ConvNeXt's 7x7 at 56x56) is copied once; every output column
// of the copy is then an interior one: a step is kh * kw broadcast-weight FMAs on plain loads, in two
// partial sums per row. At stride 2 the copy splits the columns into two phase planes (even padded
// columns, odd ones), so that the taps of L outputs at stride 2 are L consecutive floats of one phase:
// one load per tap instead of two loads and a permute. Larger planes vectorize the interior in place
// and compute the border columns like __ref. A row narrower than L is one step stored with a masked
// store (AVX) or through a small buffer; a wider row's last step overlaps the one before (outputs are
// written, not accumulated).
#pragma once

#include <cstdint>
#include <cstring>

#include "common/macros.h"
#include "kernels/conv/channel_lanes_impl.h"
#include "kernels/depthwise/depthwise.h"

namespace flexpipe {
namespace {

constexpr int64_t kxk_max_taps = 64;  // wider kernels run __ref

struct KxkPlane {
    static constexpr int64_t capacity = depthwise_kxk_scratch_floats;  // 64 KiB on the stack
    int64_t rows = 0, cols = 0;                 // rows = 0: does not fit; cols: per phase plane
    int64_t phases = 1;                         // the stride: column phases (1, or 2 at stride 2)
    int64_t floats() const { return rows * cols * phases; }
};

// The padded copy's geometry for L-lane steps: scratch row r is input row r - pad_top; padded column q
// (input column q - pad_left) is column q / S of phase plane q % S. The taps (ky, kx) of the step at
// output column `at` are then columns at + (kx d) / S + j (j < L) of phase (kx d) % S, row oy S + ky d;
// the last step starts at max(ow - L, 0).
template <int L>
inline KxkPlane kxk_plane(const DepthwiseShape& s) {
    KxkPlane g;
    g.phases = s.stride;
    const int64_t steps_end = (s.ow > L ? s.ow : L) - 1;  // last output column a step covers
    g.rows = (s.oh - 1) * s.stride + (s.kh - 1) * s.dilation + 1;
    const int64_t need = steps_end + ((s.kw - 1) * s.dilation) / s.stride + 1;
    const int64_t copied = (s.pad_left + s.w - 1) / s.stride + 1;
    g.cols = ((need > copied ? need : copied) + L - 1) / L * L;
    if (g.floats() > KxkPlane::capacity) g.rows = 0;
    return g;
}

// Input row xr (w floats) into row r of the phase planes: padded column q = ix + pad_left goes to
// column q / S of phase q % S. Stride 2 splits even and odd columns with Vec::load_evens.
template <class Vec>
inline void kxk_copy_row(const DepthwiseShape& s, const KxkPlane& g, const float* xr, float* pad, int64_t r) {
    constexpr int L = Vec::lanes;
    if (g.phases == 1) {
        std::memcpy(pad + r * g.cols + s.pad_left, xr, static_cast<size_t>(s.w) * sizeof(float));
        return;
    }
    for (int64_t e = 0; e < 2; ++e) {
        // phase e holds padded columns 2 c + e, i.e. input columns 2 c + e - pad_left >= 0
        const int64_t c0 = (s.pad_left - e + 1) / 2;  // ceil((pad_left - e) / 2), pad_left >= 0
        const int64_t first = 2 * c0 + e - s.pad_left;  // 0 or 1
        if (first >= s.w) continue;
        const int64_t n = (s.w - first + 1) / 2;  // input columns first, first + 2, ... < w
        float* dst = pad + (e * g.rows + r) * g.cols + c0;
        const float* src = xr + first;
        int64_t i = 0;
        for (; first + 2 * (i + L) - 1 <= s.w - 1; i += L) Vec::store(dst + i, Vec::load_evens(src + 2 * i));
        for (; i < n; ++i) dst[i] = src[2 * i];
    }
}
// L outputs: rows[ky] + off is the input element of the step's tap (ky, 0); a null rows[ky] is a
// padding row. wv: the broadcast weights.
template <class Vec>
inline typename Vec::V kxk_step(const DepthwiseShape& s, const float* const* rows, int64_t off, const typename Vec::V* wv,
                                float b) {
    using V = typename Vec::V;
    V acc[2] = {Vec::set1(b), Vec::zero()};
    int parity = 0;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        if (!rows[ky]) continue;
        const float* r = rows[ky] + off;
        const V* wr = wv + ky * s.kw;
        if (s.stride == 1) {
            for (int64_t kx = 0; kx < s.kw; ++kx, parity ^= 1)
                acc[parity] = Vec::fma(wr[kx], Vec::load(r + kx * s.dilation), acc[parity]);
        } else {
            for (int64_t kx = 0; kx < s.kw; ++kx, parity ^= 1)
                acc[parity] = Vec::fma(wr[kx], Vec::load_strided(r + kx * s.dilation, s.stride), acc[parity]);
        }
    }
    return Vec::add(acc[0], acc[1]);
}

template <class Vec>
inline void kxk_store(float* yr, int64_t ow, int64_t at, typename Vec::V acc, const ConvActivation& act,
                      typename Vec::V vlo, typename Vec::V vhi) {
    constexpr int L = Vec::lanes;
    if (act.clamp) acc = Vec::clamp(acc, vlo, vhi);  // NaN stays NaN
    if (ow >= L) {
        Vec::store(yr + at, acc);
        return;
    }
    if (Vec::masked_memory) {
        Vec::store_first(yr, ow, acc);
        return;
    }
    float lanes[L];
    Vec::store(lanes, acc);
    for (int64_t i = 0; i < ow; ++i) yr[i] = lanes[i];
}

// R output rows x L columns from the padded copy (kxk_plane's layout): acc[j] is output row oy + j,
// column `at`. R rows give 2 R independent FMA chains (a lone row's two chains wait on the FMA latency);
// a tap's weight is broadcast once for the R rows.
template <class Vec, int R, int S>
inline void kxk_rows(const DepthwiseShape& s, const float* pad, const KxkPlane& g, int64_t oy, int64_t at,
                     const float* wc, float b, typename Vec::V (&out)[R]) {
    using V = typename Vec::V;
    V acc[R][2];
#pragma GCC unroll 4
    for (int j = 0; j < R; ++j) acc[j][0] = Vec::set1(b), acc[j][1] = Vec::zero();
    const int64_t cols = g.cols, plane = g.rows * g.cols;
    const float* base = pad + oy * S * cols + at;
    // Tap pairs (kx, kx + 1) into the two chains of each row: a chain picked at run time would put the
    // accumulators on the stack.
    auto tap = [&](const float* p, const float* wt, int c) {
        const V w = Vec::load1(wt);
#pragma GCC unroll 4
        for (int j = 0; j < R; ++j) acc[j][c] = Vec::fma(w, Vec::load(p + j * S * cols), acc[j][c]);
    };
    auto at_tap = [&](const float* row, int64_t kx) {
        const int64_t q = kx * s.dilation;
        return S == 1 ? row + q : row + (q % S) * plane + q / S;
    };
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const float* row = base + ky * s.dilation * cols;
        const float* wr = wc + ky * s.kw;
        int64_t kx = 0;
        for (; kx + 1 < s.kw; kx += 2) {
            tap(at_tap(row, kx), wr + kx, 0);
            tap(at_tap(row, kx + 1), wr + kx + 1, 1);
        }
        if (kx < s.kw) tap(at_tap(row, kx), wr + kx, 0);
    }
#pragma GCC unroll 4
    for (int j = 0; j < R; ++j) out[j] = Vec::add(acc[j][0], acc[j][1]);
}

// Output rows [oy, oy + R) of one plane from its padded copy.
template <class Vec, int R, int S>
inline void kxk_row_block(const DepthwiseShape& s, const float* pad, const KxkPlane& g, int64_t oy, const float* wc,
                          float b, float* yp, const ConvActivation& act, typename Vec::V vlo, typename Vec::V vhi) {
    constexpr int L = Vec::lanes;
    typename Vec::V out[R];
    for (int64_t ox = 0; ox < s.ow; ox += L) {
        const int64_t at = ox + L > s.ow && s.ow >= L ? s.ow - L : ox;
        kxk_rows<Vec, R, S>(s, pad, g, oy, at, wc, b, out);
#pragma GCC unroll 4
        for (int j = 0; j < R; ++j) kxk_store<Vec>(yp + (oy + j) * s.ow, s.ow, at, out[j], act, vlo, vhi);
    }
}

template <class Vec, int S>
inline void kxk_plane_rows(const DepthwiseShape& s, const float* pad, const KxkPlane& g, const float* wc, float b,
                           float* yp, const ConvActivation& act, typename Vec::V vlo, typename Vec::V vhi) {
    int64_t oy = 0;
    for (; oy + 4 <= s.oh; oy += 4) kxk_row_block<Vec, 4, S>(s, pad, g, oy, wc, b, yp, act, vlo, vhi);
    for (; oy + 2 <= s.oh; oy += 2) kxk_row_block<Vec, 2, S>(s, pad, g, oy, wc, b, yp, act, vlo, vhi);
    for (; oy < s.oh; ++oy) kxk_row_block<Vec, 1, S>(s, pad, g, oy, wc, b, yp, act, vlo, vhi);
}

// Small planes, channels in the lanes: L planes [p0, p0 + L) copied into a zero-padded tile of
// (row, column, lane) (L pixels at a time, load_channel_lanes), the taps' weights and the biases gathered
// per lane; then L output pixels (flat
// over the plane) per step, each a chain of kh * kw FMAs of a tile vector by a weight vector; the L x L
// accumulators transposed and stored as L consecutive pixels of each plane. For rows of up to 2 L
// output columns whose tile fits: no lane of a step is wasted on a row's end, and no per-plane copy,
// phase split or row setup (bench:kernels conv, AVX-512, 1 thread: MnasNet's 5x5 at 14x14 0.075 ->
// 0.052 ms, ConvNeXt's 7x7 at 14x14 0.19 -> 0.13, EfficientNet's 5x5 at 28x28 0.24 -> 0.19; the
// transposes cost less than the row path's overheads there). `tile`: KxkPlane::capacity floats, zero
// outside the copied pixels (the caller zeroes it once: every group writes the same positions).
struct KxkTile {
    int64_t rows = 0, cols = 0;  // rows = 0: does not fit; rows: of one band
    int64_t band = 0;            // output rows per band (a band's input rows are the tile's rows)
};

// The tile of L planes for bands of output rows (depthwise_kxk_band): planes whose whole tile would not
// fit (MnasNet's and EfficientNet's 5x5 stride 2 at 56x56) go in bands, each band transposing the input
// rows it reads (the (kh - 1) d + 1 - stride rows two bands share twice).
template <int L>
inline KxkTile kxk_tile(const DepthwiseShape& s) {
    KxkTile t;
    t.band = depthwise_kxk_band(s, L);
    if (t.band == 0) return t;
    t.cols = (s.ow - 1) * s.stride + (s.kw - 1) * s.dilation + 1;
    t.rows = (t.band - 1) * s.stride + (s.kh - 1) * s.dilation + 1;
    return t;
}

template <class Vec>
inline void kxk_channels(const DepthwiseShape& s, const KxkTile& t, const float* x, const float* w, const float* bias,
                         float* y, const ConvActivation& act, int64_t p0, float* tile) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const int64_t taps = s.kh * s.kw, plane = s.h * s.w;
    alignas(alignof(V)) float wt[kxk_max_taps * L];
    alignas(alignof(V)) float bl[L];
    for (int lane = 0; lane < L; ++lane) {
        const int64_t c = (p0 + lane) % s.channels;
        for (int64_t i = 0; i < taps; ++i) wt[i * L + lane] = w[c * taps + i];
        bl[lane] = bias ? bias[c] : 0.0f;
    }
    const V b = Vec::load(bl);
    for (int64_t oy0 = 0; oy0 < s.oh; oy0 += t.band) {
        const int64_t oy1 = oy0 + t.band < s.oh ? oy0 + t.band : s.oh;
        // Tile row r holds input row top + r; rows outside the input are zero (padding), columns
        // outside it too (zeroed once by the caller: every band writes the same columns).
        const int64_t top = oy0 * s.stride - s.pad_top;
        const int64_t rows = (oy1 - 1 - oy0) * s.stride + (s.kh - 1) * s.dilation + 1;
        const int64_t iy0 = top < 0 ? 0 : top, iy1 = top + rows < s.h ? top + rows : s.h;
        for (int64_t r = 0; r < rows; ++r)
            if (top + r < 0 || top + r >= s.h) std::memset(tile + r * t.cols * L, 0, static_cast<size_t>(t.cols * L) * sizeof(float));
        // The band's input rows, L pixels of the L planes per step, transposed into (row, column) vectors.
        int64_t iy = iy0, ix = 0;  // pixel i0 + j, counted (a division per pixel costs more than the FMAs)
        for (int64_t i0 = iy0 * s.w; i0 < iy1 * s.w; i0 += L) {
            const int64_t n = iy1 * s.w - i0 < L ? iy1 * s.w - i0 : L;
            V px[L];
            load_channel_lanes<Vec>(x + p0 * plane + i0, plane, n, px);
            for (int64_t j = 0; j < n; ++j) {
                const int64_t q = ix + s.pad_left;
                if (q >= 0 && q < t.cols) Vec::store(tile + ((iy - top) * t.cols + q) * L, px[j]);
                if (++ix == s.w) ix = 0, ++iy;
            }
        }
        const int64_t q_end = oy1 * s.ow;
        int64_t oy = oy0, ox = 0;  // output pixel q0, counted
        for (int64_t q0 = oy0 * s.ow; q0 < q_end; q0 += L) {
            const int64_t n = q_end - q0 < L ? q_end - q0 : L;
            int64_t base[L];
            for (int j = 0; j < L; ++j) {  // a short last step repeats its last pixel
                base[j] = ((oy - oy0) * s.stride * t.cols + ox * s.stride) * L;
                if (j + 1 < n && ++ox == s.ow) ox = 0, ++oy;
            }
            if (++ox == s.ow) ox = 0, ++oy;  // on to pixel q0 + L (a full step's last pixel was not counted)
            V acc[L];
#pragma GCC unroll 16
            for (int j = 0; j < L; ++j) acc[j] = b;
            for (int64_t ky = 0; ky < s.kh; ++ky) {
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                    const V wv = Vec::load(wt + (ky * s.kw + kx) * L);
                    const float* src = tile + (ky * s.dilation * t.cols + kx * s.dilation) * L;
#pragma GCC unroll 16
                    for (int j = 0; j < L; ++j) acc[j] = Vec::fma(Vec::load(src + base[j]), wv, acc[j]);
                }
            }
            store_channel_lanes<Vec>(acc, y + p0 * depthwise_y_plane(s) + q0, depthwise_y_plane(s), n, act);
        }
    }
}

template <class Vec>
void depthwise_kxk_vec(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                       const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const int64_t taps = s.kh * s.kw;
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    if (taps > kxk_max_taps) {
        depthwise_f32_kxk__ref(s, x, w, bias, y, act, plane_begin, plane_end);
        return;
    }
    const KxkPlane g = kxk_plane<L>(s);
    alignas(alignof(V)) float pad[KxkPlane::capacity];
    if (g.rows > 0) std::memset(pad, 0, static_cast<size_t>(g.floats()) * sizeof(float));
    V wv[kxk_max_taps];
    const float* rows[kxk_max_taps];
    const V vlo = Vec::set1(act.lo), vhi = Vec::set1(act.hi);
    // The in-place path's interior: output columns [lo, hi), whose taps all lie inside a row.
    int64_t lo = (s.pad_left + s.stride - 1) / s.stride;
    const int64_t last = s.w - 1 - (s.kw - 1) * s.dilation + s.pad_left;  // ox * stride <= last
    int64_t hi = last < 0 ? 0 : last / s.stride + 1;
    if (hi > s.ow) hi = s.ow;
    if (lo > hi) lo = hi;
    const KxkTile tile = kxk_tile<L>(s);
    if (tile.rows > 0 && plane_end - plane_begin >= L) {
        std::memset(pad, 0, static_cast<size_t>(tile.rows * tile.cols * L) * sizeof(float));
        for (; plane_begin + L <= plane_end; plane_begin += L)
            kxk_channels<Vec>(s, tile, x, w, bias, y, act, plane_begin, pad);
        if (g.rows > 0) std::memset(pad, 0, static_cast<size_t>(g.floats()) * sizeof(float));
    }
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* wc = w + c * taps;
        const float b = bias ? bias[c] : 0.0f;
        for (int64_t i = 0; i < taps; ++i) wv[i] = Vec::set1(wc[i]);
        const float* xp = x + p * s.h * s.w;
        float* yp = y + p * depthwise_y_plane(s);
        if (g.rows > 0) {
            // The copy: rows [pad_top, pad_top + h) and columns [pad_left, pad_left + w) of the scratch
            // (the rest stays zero from the memset: every plane writes the same region).
            for (int64_t iy = 0; iy < s.h; ++iy) {
                const int64_t r = iy + s.pad_top;
                if (r >= 0 && r < g.rows) kxk_copy_row<Vec>(s, g, xp + iy * s.w, pad, r);
            }
            if (s.stride == 1) kxk_plane_rows<Vec, 1>(s, pad, g, wc, b, yp, act, vlo, vhi);
            else kxk_plane_rows<Vec, 2>(s, pad, g, wc, b, yp, act, vlo, vhi);
            continue;
        }
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            for (int64_t ky = 0; ky < s.kh; ++ky) {
                const int64_t iy = oy * s.stride - s.pad_top + ky * s.dilation;
                rows[ky] = iy >= 0 && iy < s.h ? xp + iy * s.w : nullptr;
            }
            float* yr = yp + oy * s.ow;
            auto scalar = [&](int64_t ox) {
                float v = depthwise_kxk_pixel(s, xp, wc, b, oy, ox);
                if (act.clamp) v = v < act.lo ? act.lo : (v > act.hi ? act.hi : v);
                yr[ox] = v;
            };
            for (int64_t ox = 0; ox < lo; ++ox) scalar(ox);
            if (hi - lo < L) {
                for (int64_t ox = lo; ox < hi; ++ox) scalar(ox);
            } else {
                for (int64_t ox = lo; ox < hi; ox += L) {  // hi - lo >= L, so ow >= L: whole stores
                    const int64_t at = ox + L > hi ? hi - L : ox;
                    kxk_store<Vec>(yr, s.ow, at, kxk_step<Vec>(s, rows, at * s.stride - s.pad_left, wv, b), act, vlo, vhi);
                }
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) scalar(ox);
        }
    }
}

}  // namespace
}  // namespace flexpipe
