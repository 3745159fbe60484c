// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, AVX-512F: 16 output columns per step, borders by write masks.
//
// Three layouts of the work. The first two read the input plane in place (no padded copy, no scalar
// border):
// - Stride 1, "same" padding on the columns (pad 1, ow == w), rows of at least 12 columns, pad_top 1
//   (a whole plane, or the first band of one) or 0 (a band of rows below the first, ConvDepthwise's):
//   the output is one flat run of oh * w values, so a step of 16 may cross rows and a 14x14 plane
//   wastes no lanes. Output q reads input q + off + dy * w + dx (dy, dx in -1..1, off = (1 - pad_top)
//   w); the lanes whose tap falls off the row (column 0 for dx = -1, column w - 1 for dx = +1) are
//   masked on the FMA, and each input row is loaded once per step, its dx = -1 and +1 taps shifted
//   out of neighbouring loads (valignd). The steps whose taps reach above row 0 or below row h - 1
//   take masked loads, which do not fault on masked-off lanes, so nothing outside the plane is read.
//   The column masks are the same for every plane of a call and are built once.
// - Stride 2, output rows of more than 8 columns: per input row, two loads hold the 32 columns the
//   16 outputs start from and a two-source permute each splits them into even (tap 0) and odd
//   (tap 1) columns; tap 2, the evens shifted by one, comes from two loads 2 columns further on.
//   Output rows go in pairs that share their middle input row. Lanes outside the row are zeroed by
//   the permutes' masks, rows outside the plane skipped. Bound by its permutes (shuffle pipes).
// - Planes of at most 16 columns (MobileNetV2's 14x14 and 7x7, stride 1 or 2), 16 planes at a time,
//   before the other two: transposed into a scratch of 16-channel pixels, computed with full vectors,
//   transposed back (below; onnxruntime's NCHWc kernel computes this way with no transposes, its
//   tensors being blocked already). conv.bench.js --layers dw14,dw14b,dw14s2,dw7, 1 thread, Zen 4:
//   0.052 -> 0.040, 0.074 -> 0.057, 0.042 -> 0.034 and 0.036-0.040 -> 0.033 ms.
// Masked loads are slow on Zen 5, so the in-place layouts use plain loads wherever those stay inside
// the plane. The planes of a range left over from whole 16s take the in-place layouts where those fit;
// everything else (other paddings, planes larger than the mask tables) goes to the AVX2 variant.
// One partial sum per kernel row, as the other variants (tolerance in depthwise.h).
#include <immintrin.h>

#include <algorithm>

#include "common/macros.h"
#include "kernels/depthwise/depthwise.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {
namespace {

constexpr int64_t lanes = 16;
constexpr int64_t max_plane = 16384;                 // flat path: outputs per plane (1024 steps of masks)
constexpr int64_t max_row_steps = 256;               // stride-2 path: steps per output row (4096 columns)
constexpr int64_t min_flat_width = 12;               // narrower rows: the AVX2 variant's padded copy
constexpr int64_t min_s2_width = lanes / 2 + 1;      // stride 2 with ow <= 8: AVX2's 8 lanes fit better

// Lanes i of a 16-lane step whose value v + i lies in [lo, hi).
inline __mmask16 lanes_between(int64_t v, int64_t lo, int64_t hi) {
    const int64_t a = lo - v < 0 ? 0 : (lo - v > lanes ? lanes : lo - v);
    const int64_t b = hi - v < 0 ? 0 : (hi - v > lanes ? lanes : hi - v);
    if (b <= a) return 0;
    const uint32_t upto_b = b == lanes ? 0xffffu : (1u << b) - 1u;
    return static_cast<__mmask16>(upto_b & ~((1u << a) - 1u));
}

// part += w0 * r[-1] + w1 * r[0] + w2 * r[1] with r = plane + at, on the lanes of masks left, mid and
// right. Masked loads are slow on Zen 5 (dw 3x3 s1 144ch 56x56 in conv.bench: 0.225 ms with every load
// masked, 0.165 with plain loads and the masks on the FMAs), so they are used only where a plain load
// would leave the plane of n floats: the first and last steps of a plane.
inline __m512 taps3(__m512 part, const float* plane, int64_t at, int64_t n, __mmask16 left, __mmask16 mid,
                    __mmask16 right, __m512 w0, __m512 w1, __m512 w2) {
    const float* row = plane + at;
    if (at >= 1 && at + lanes + 1 <= n) {
        part = _mm512_mask3_fmadd_ps(w0, _mm512_loadu_ps(row - 1), part, left);
        part = _mm512_mask3_fmadd_ps(w1, _mm512_loadu_ps(row), part, mid);
        return _mm512_mask3_fmadd_ps(w2, _mm512_loadu_ps(row + 1), part, right);
    }
    part = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(left, row - 1), part);
    part = _mm512_fmadd_ps(w1, _mm512_maskz_loadu_ps(mid, row), part);
    return _mm512_fmadd_ps(w2, _mm512_maskz_loadu_ps(right, row + 1), part);
}

// The same inside the plane, away from its first and last rows: every lane's row exists and every
// load is in bounds; only the taps off the row's ends are masked.
inline __m512 taps3_inner(__m512 part, const float* row, __mmask16 left, __mmask16 right, __m512 w0, __m512 w1,
                          __m512 w2) {
    part = _mm512_mask3_fmadd_ps(w0, _mm512_loadu_ps(row - 1), part, left);
    part = _mm512_fmadd_ps(w1, _mm512_loadu_ps(row), part);
    return _mm512_mask3_fmadd_ps(w2, _mm512_loadu_ps(row + 1), part, right);
}

bool fits_flat(const DepthwiseShape& s) {
    return s.stride == 1 && (s.pad_top == 0 || s.pad_top == 1) && s.pad_left == 1 && s.ow == s.w &&
           s.w >= min_flat_width && s.oh * s.w <= max_plane;
}

// The weights and bias of one channel as vectors.
struct ChannelTaps {
    __m512 w[9];
    __m512 bias;
    ChannelTaps(const float* wc, float b) {
        for (int i = 0; i < 9; ++i) w[i] = _mm512_set1_ps(wc[i]);
        bias = _mm512_set1_ps(b);
    }
};

// One plane of the flat stride-1 layout (see the top of the file). The steps away from the first and
// last rows, nearly all of a plane, run a loop with no bounds and no mask arithmetic: plain loads, the
// per-step column masks on the FMAs of the outer taps, whole stores. The clamp is a template argument
// so that the loop carries no test of it.
template <bool Clamp>
void flat_plane(const DepthwiseShape& s, const float* xp, float* yp, const ChannelTaps& t, const __mmask16* left,
                const __mmask16* right, __m512 lo, __m512 hi) {
    // Outputs [0, n_out); input floats [0, n_in); output q's middle tap row starts at input q + off.
    const int64_t n_out = s.oh * s.w, n_in = s.h * s.w, off = (1 - s.pad_top) * s.w, steps = (n_out + lanes - 1) / lanes;
    auto finish = [&](__m512 p0, __m512 p1, __m512 p2) {
        const __m512 v = _mm512_add_ps(_mm512_add_ps(p0, p1), p2);
        return Clamp ? _mm512_min_ps(hi, _mm512_max_ps(lo, v)) : v;  // NaN stays NaN
    };
    // Steps [j0, j1) have every lane's three tap rows inside the input and all 16 outputs inside the
    // plane; j0 >= 1, so the loads of the 16 floats before a step's rows stay in the plane too.
    const int64_t j0 = std::max<int64_t>(1, (std::max<int64_t>(0, s.w - off) + lanes - 1) / lanes);
    const int64_t last = std::min(n_in - off - s.w, n_out) - lanes;  // the last q whose step is whole
    const int64_t j1 = last >= 0 ? last / lanes + 1 : 0;
    auto border = [&](int64_t j) {
        const int64_t q = j * lanes;
        const __mmask16 valid = lanes_between(q, 0, n_out), l = left[j], r = right[j];
        // Lanes whose tap row dy lies inside the input: q + off + dy w in [0, n_in).
        auto rows_in = [&](int64_t dy) {
            return static_cast<__mmask16>(valid & lanes_between(q, -off - dy * s.w, n_in - off - dy * s.w));
        };
        const __mmask16 up = rows_in(-1), mid = rows_in(0), down = rows_in(1);
        const __m512 zero = _mm512_setzero_ps();
        const __m512 v = finish(taps3(t.bias, xp, q + off - s.w, n_in, l & up, up, r & up, t.w[0], t.w[1], t.w[2]),
                                taps3(zero, xp, q + off, n_in, l & mid, mid, r & mid, t.w[3], t.w[4], t.w[5]),
                                taps3(zero, xp, q + off + s.w, n_in, l & down, down, r & down, t.w[6], t.w[7], t.w[8]));
        _mm512_mask_storeu_ps(yp + q, valid, v);
    };
    int64_t j = 0;
    for (; j < j0 && j < steps; ++j) border(j);
    if (j < j1) {
        // Each input row is loaded once, 16 floats ahead: the taps at dx = -1 and +1 are the loaded
        // vectors shifted by one lane (valignd) instead of two more loads that straddle cache lines
        // (dw 3x3 s1 144ch 56x56 in conv.bench: 0.157 -> 0.104 ms). Only lane 15 of the vector before
        // the first step and lane 0 of the one after the last are used; the loads that would reach
        // outside the plane for them are masked.
        const int64_t at0 = j * lanes + off - s.w;  // row above the first step
        const float* r0 = xp + at0;
        const float* r1 = r0 + s.w;
        const float* r2 = r1 + s.w;
        const __mmask16 last_lane = at0 >= 1 ? 0x8000 : 0;
        __m512 prev0 = _mm512_maskz_loadu_ps(last_lane, r0 - lanes), cur0 = _mm512_loadu_ps(r0);
        __m512 prev1 = _mm512_loadu_ps(r1 - lanes), cur1 = _mm512_loadu_ps(r1);
        __m512 prev2 = _mm512_loadu_ps(r2 - lanes), cur2 = _mm512_loadu_ps(r2);
        auto step = [&](__m512 next0, __m512 next1, __m512 next2) {
            const __mmask16 l = left[j], r = right[j];
            auto row = [&](__m512 part, __m512 prev, __m512 cur, __m512 next, const __m512* wk) {
                const __m512i c = _mm512_castps_si512(cur);
                const __m512 west = _mm512_castsi512_ps(_mm512_alignr_epi32(c, _mm512_castps_si512(prev), 15));
                const __m512 east = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(next), c, 1));
                part = _mm512_mask3_fmadd_ps(wk[0], west, part, l);
                part = _mm512_fmadd_ps(wk[1], cur, part);
                return _mm512_mask3_fmadd_ps(wk[2], east, part, r);
            };
            const __m512 p0 = row(t.bias, prev0, cur0, next0, t.w);
            const __m512 p1 = row(_mm512_setzero_ps(), prev1, cur1, next1, t.w + 3);
            const __m512 p2 = row(_mm512_setzero_ps(), prev2, cur2, next2, t.w + 6);
            _mm512_storeu_ps(yp + j * lanes, finish(p0, p1, p2));
            prev0 = cur0, cur0 = next0, prev1 = cur1, cur1 = next1, prev2 = cur2, cur2 = next2;
            r0 += lanes, r1 += lanes, r2 += lanes;
        };
        // Steps whose row below has 16 more floats inside the plane.
        const int64_t plain = n_in - 2 * lanes - s.w - off;
        const int64_t plain_end = plain >= 0 ? std::min(j1, plain / lanes + 1) : 0;
        for (; j < plain_end; ++j)
            step(_mm512_loadu_ps(r0 + lanes), _mm512_loadu_ps(r1 + lanes), _mm512_loadu_ps(r2 + lanes));
        for (; j < j1; ++j) {
            const int64_t next = (j + 1) * lanes + off;  // of the middle row, in the input
            step(_mm512_maskz_loadu_ps(lanes_between(next - s.w, 0, n_in), r0 + lanes),
                 _mm512_maskz_loadu_ps(lanes_between(next, 0, n_in), r1 + lanes),
                 _mm512_maskz_loadu_ps(lanes_between(next + s.w, 0, n_in), r2 + lanes));
        }
    }
    for (; j < steps; ++j) border(j);
}

void depthwise_flat_s1(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                       const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    const int64_t n = s.oh * s.w, steps = (n + lanes - 1) / lanes;
    // Per step: the valid lanes whose left (dx = -1) and right (dx = +1) taps stay in their row.
    __mmask16 left[max_plane / lanes], right[max_plane / lanes];
    for (int64_t j = 0, col = 0; j < steps; ++j) {  // col: column of output j * lanes + i
        uint32_t l = 0, r = 0;
        for (int64_t i = 0; i < lanes && j * lanes + i < n; ++i, col = col + 1 == s.w ? 0 : col + 1) {
            l |= static_cast<uint32_t>(col != 0) << i;
            r |= static_cast<uint32_t>(col != s.w - 1) << i;
        }
        left[j] = static_cast<__mmask16>(l), right[j] = static_cast<__mmask16>(r);
    }
    const __m512 lo = _mm512_set1_ps(act.lo), hi = _mm512_set1_ps(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const ChannelTaps t(w + c * 9, bias ? bias[c] : 0.0f);
        if (act.clamp) {
            flat_plane<true>(s, x + p * s.h * s.w, y + p * depthwise_y_plane(s), t, left, right, lo, hi);
        } else {
            flat_plane<false>(s, x + p * s.h * s.w, y + p * depthwise_y_plane(s), t, left, right, lo, hi);
        }
    }
}

bool fits_rows_s2(const DepthwiseShape& s) {
    return s.stride == 2 && s.ow >= min_s2_width && (s.ow + lanes - 1) / lanes <= max_row_steps;
}

// Step j of an input row covers columns from = 32 j - pad_left on. Its loads (columns from, from + 16,
// from + 2 and from + 18 on), masked to the row, are used only where a plain load would leave the
// plane; after the split, the tap masks keep the lanes whose column (from + 2 i + tap) lies in the
// row, zeroing what a plain load took from the neighbouring rows.
struct RowStep {
    __mmask16 load[4];
    __mmask16 tap[3];
};

// Lanes i of a 16-lane step whose column from + 2 i lies in [0, w).
inline __mmask16 even_lanes_in_row(int64_t from, int64_t w) {
    uint32_t m = 0;
    for (int64_t i = 0; i < lanes; ++i) m |= static_cast<uint32_t>(from + 2 * i >= 0 && from + 2 * i < w) << i;
    return static_cast<__mmask16>(m);
}

// The three taps (columns from + 2 i, from + 2 i + 1, from + 2 i + 2) of a step of the input row
// that starts at offset at of a plane of n floats: four loads and three two-source permutes. Taking
// tap 2 from the evens shifted by one lane (valignd) with the next step's first even instead costs
// the same shuffles (permutes and valignd share the shuffle pipes, which bound this kernel) and was
// 8% slower (conv.bench dw-s2, alternated processes).
struct Taps {
    __m512 t[3];
};
inline Taps split_step(const float* plane, int64_t at, int64_t n, const RowStep& m) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const float* r = plane + at;
    __m512 lo, hi, lo2, hi2;
    if (at >= 0 && at + 2 * lanes + 2 <= n) {
        lo = _mm512_loadu_ps(r), hi = _mm512_loadu_ps(r + lanes);
        lo2 = _mm512_loadu_ps(r + 2), hi2 = _mm512_loadu_ps(r + lanes + 2);
    } else {  // the plane's first or last columns: masked loads (slow, but no fault)
        lo = _mm512_maskz_loadu_ps(m.load[0], r), hi = _mm512_maskz_loadu_ps(m.load[1], r + lanes);
        lo2 = _mm512_maskz_loadu_ps(m.load[2], r + 2), hi2 = _mm512_maskz_loadu_ps(m.load[3], r + lanes + 2);
    }
    return {{_mm512_maskz_permutex2var_ps(m.tap[0], lo, even, hi), _mm512_maskz_permutex2var_ps(m.tap[1], lo, odd, hi),
             _mm512_maskz_permutex2var_ps(m.tap[2], lo2, even, hi2)}};
}

// One plane, two output rows at a time: rows oy and oy + 1 read input rows 2 oy - pad_top + 0..4, and
// the middle one (kernel row 2 of the first, 0 of the second) is split once for both, 15 permutes per
// pair of steps instead of 18.
template <bool Clamp>
void rows_s2_plane(const DepthwiseShape& s, const float* xp, float* yp, const ChannelTaps& t, const RowStep* m,
                   const __mmask16* out, __m512 lo, __m512 hi) {
    const int64_t steps = (s.ow + lanes - 1) / lanes, n = s.h * s.w;
    auto finish = [&](const __m512 (&part)[3]) {
        const __m512 v = _mm512_add_ps(_mm512_add_ps(part[0], part[1]), part[2]);
        return Clamp ? _mm512_min_ps(hi, _mm512_max_ps(lo, v)) : v;  // NaN stays NaN
    };
    for (int64_t oy = 0; oy < s.oh; oy += 2) {
        const bool pair = oy + 1 < s.oh;
        const int64_t iy0 = 2 * oy - s.pad_top;
        bool in[5];
        for (int r = 0; r < 5; ++r) in[r] = iy0 + r >= 0 && iy0 + r < s.h && (pair || r < 3);
        for (int64_t j = 0; j < steps; ++j) {
            const int64_t at = iy0 * s.w + 2 * j * lanes - s.pad_left;
            __m512 top[3] = {t.bias, _mm512_setzero_ps(), _mm512_setzero_ps()};
            __m512 bottom[3] = {t.bias, _mm512_setzero_ps(), _mm512_setzero_ps()};
            for (int r = 0; r < 5; ++r) {
                if (!in[r]) continue;
                const Taps x = split_step(xp, at + r * s.w, n, m[j]);
                if (r < 3) {  // kernel row r of the top output row
                    for (int kx = 0; kx < 3; ++kx) top[r] = _mm512_fmadd_ps(t.w[r * 3 + kx], x.t[kx], top[r]);
                }
                if (r >= 2) {  // kernel row r - 2 of the bottom one
                    for (int kx = 0; kx < 3; ++kx)
                        bottom[r - 2] = _mm512_fmadd_ps(t.w[(r - 2) * 3 + kx], x.t[kx], bottom[r - 2]);
                }
            }
            _mm512_mask_storeu_ps(yp + oy * s.ow + j * lanes, out[j], finish(top));
            if (pair) _mm512_mask_storeu_ps(yp + (oy + 1) * s.ow + j * lanes, out[j], finish(bottom));
        }
    }
}

void depthwise_rows_s2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                       const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    const int64_t steps = (s.ow + lanes - 1) / lanes;
    RowStep m[max_row_steps];
    __mmask16 out[max_row_steps];
    for (int64_t j = 0; j < steps; ++j) {
        const int64_t from = 2 * j * lanes - s.pad_left;
        m[j] = {{lanes_between(from, 0, s.w), lanes_between(from + lanes, 0, s.w), lanes_between(from + 2, 0, s.w),
                 lanes_between(from + lanes + 2, 0, s.w)},
                {even_lanes_in_row(from, s.w), even_lanes_in_row(from + 1, s.w), even_lanes_in_row(from + 2, s.w)}};
        out[j] = lanes_between(j * lanes, 0, s.ow);
    }
    const __m512 lo = _mm512_set1_ps(act.lo), hi = _mm512_set1_ps(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const ChannelTaps t(w + c * 9, bias ? bias[c] : 0.0f);
        const float* xp = x + p * s.h * s.w;
        float* yp = y + p * depthwise_y_plane(s);
        if (act.clamp) {
            rows_s2_plane<true>(s, xp, yp, t, m, out, lo, hi);
        } else {
            rows_s2_plane<false>(s, xp, yp, t, m, out, lo, hi);
        }
    }
}

// ---- Planes of at most 16 columns: 16 channels at a time -------------------------------------------
// MobileNetV2's 14x14 and 7x7 planes (stride 1, and stride 2 from 14x14) leave lanes idle along a row
// and pay each plane's setup for 49-196 outputs. Here 16 consecutive planes go through a scratch of
// 16-channel pixels: each input row of the 16 planes is one 16x16 transpose (VecAvx512::transpose) into
// a zero-padded scratch row, every output pixel is 9 FMAs over full vectors with no border case, and
// each output row goes back through one transpose. The arithmetic of onnxruntime's NCHWc kernel, with the layout change
// inside this one.
constexpr int64_t blocked_max_pixels = 18 * 18;  // scratch pixels: a 16x16 plane at stride 1, padded

// The scratch geometry: rows x cols 16-channel pixels, input (iy, ix) at (iy + pad_top, ix + pad_left).
struct BlockedScratch {
    int64_t rows = 0, cols = 0;
};

inline BlockedScratch blocked_scratch(const DepthwiseShape& s) {
    return {(s.oh - 1) * s.stride + 3, (s.ow - 1) * s.stride + 3};
}

bool fits_blocked(const DepthwiseShape& s) {
    const BlockedScratch g = blocked_scratch(s);
    return s.w <= lanes && s.ow <= lanes && s.oh * s.ow <= lanes * lanes && g.rows * g.cols <= blocked_max_pixels &&
           s.pad_top >= 0 && s.pad_top <= 2 && s.pad_left >= 0 && s.pad_left <= 2;
}

// Planes [p0, p0 + 16). pad: the scratch, whose pixels outside the copied input are zero (every block
// writes the same pixels); out: oh * ow 16-channel pixels.
template <bool Clamp>
void blocked16(const DepthwiseShape& s, const BlockedScratch& g, const float* x, const float* w, const float* bias,
               float* y, __m512 lo, __m512 hi, int64_t p0, float* pad, float* out) {
    const int64_t in_plane = s.h * s.w, y_plane = depthwise_y_plane(s);
    __m512 v[16];
    // Tap t of the 16 channels: the channels' 9 weights as rows, transposed.
    for (int k = 0; k < 16; ++k) v[k] = _mm512_maskz_loadu_ps(0x1ff, w + ((p0 + k) % s.channels) * 9);
    VecAvx512::transpose(v);
    const __m512 t0 = v[0], t1 = v[1], t2 = v[2], t3 = v[3], t4 = v[4], t5 = v[5], t6 = v[6], t7 = v[7], t8 = v[8];
    alignas(64) float b[16];
    for (int k = 0; k < 16; ++k) b[k] = bias ? bias[(p0 + k) % s.channels] : 0.0f;
    const __m512 vb = _mm512_load_ps(b);
    const __mmask16 in_cols = static_cast<__mmask16>((1u << s.w) - 1u);
    const int64_t copied_cols = std::min(s.w, g.cols - s.pad_left);
    for (int64_t iy = 0; iy < s.h && iy + s.pad_top < g.rows; ++iy) {
        for (int k = 0; k < 16; ++k) v[k] = _mm512_maskz_loadu_ps(in_cols, x + (p0 + k) * in_plane + iy * s.w);
        VecAvx512::transpose(v);  // v[ix]: pixel (iy, ix) of the 16 planes
        float* dst = pad + ((iy + s.pad_top) * g.cols + s.pad_left) * 16;
        for (int64_t ix = 0; ix < copied_cols; ++ix) _mm512_store_ps(dst + ix * 16, v[ix]);
    }
    const int64_t row = g.cols * 16, step = s.stride * 16;
    for (int64_t oy = 0; oy < s.oh; ++oy) {
        const float* q = pad + oy * s.stride * row;
        float* o = out + oy * s.ow * 16;
        for (int64_t ox = 0; ox < s.ow; ++ox, q += step, o += 16) {
            __m512 a = _mm512_fmadd_ps(t0, _mm512_load_ps(q), vb);
            a = _mm512_fmadd_ps(t1, _mm512_load_ps(q + 16), a);
            a = _mm512_fmadd_ps(t2, _mm512_load_ps(q + 32), a);
            __m512 m = _mm512_mul_ps(t3, _mm512_load_ps(q + row));
            m = _mm512_fmadd_ps(t4, _mm512_load_ps(q + row + 16), m);
            m = _mm512_fmadd_ps(t5, _mm512_load_ps(q + row + 32), m);
            __m512 d = _mm512_mul_ps(t6, _mm512_load_ps(q + 2 * row));
            d = _mm512_fmadd_ps(t7, _mm512_load_ps(q + 2 * row + 16), d);
            d = _mm512_fmadd_ps(t8, _mm512_load_ps(q + 2 * row + 32), d);
            __m512 r = _mm512_add_ps(_mm512_add_ps(a, m), d);
            if (Clamp) r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));  // NaN stays NaN
            _mm512_store_ps(o, r);
        }
    }
    const __mmask16 out_cols = static_cast<__mmask16>((1u << s.ow) - 1u);
    for (int64_t oy = 0; oy < s.oh; ++oy) {
        for (int64_t j = 0; j < 16; ++j) v[j] = j < s.ow ? _mm512_load_ps(out + (oy * s.ow + j) * 16) : _mm512_setzero_ps();
        VecAvx512::transpose(v);  // v[k]: output row oy of plane p0 + k
        for (int k = 0; k < 16; ++k) _mm512_mask_storeu_ps(y + (p0 + k) * y_plane + oy * s.ow, out_cols, v[k]);
    }
}

// The whole blocks of 16 planes of [plane_begin, plane_end); returns the first plane not computed.
int64_t depthwise_blocked(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                          const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    const BlockedScratch g = blocked_scratch(s);
    alignas(64) float pad[blocked_max_pixels * 16];
    alignas(64) float out[lanes * lanes * 16];
    std::fill(pad, pad + g.rows * g.cols * 16, 0.0f);
    const __m512 lo = _mm512_set1_ps(act.lo), hi = _mm512_set1_ps(act.hi);
    int64_t p = plane_begin;
    for (; p + 16 <= plane_end; p += 16) {
        if (act.clamp) blocked16<true>(s, g, x, w, bias, y, lo, hi, p, pad, out);
        else blocked16<false>(s, g, x, w, bias, y, lo, hi, p, pad, out);
    }
    return p;
}

}  // namespace

void depthwise_f32_3x3__avx512(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                               const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    if (fits_blocked(s)) {
        plane_begin = depthwise_blocked(s, x, w, bias, y, act, plane_begin, plane_end);
        if (plane_begin == plane_end) return;
    }
    if (fits_flat(s)) {
        depthwise_flat_s1(s, x, w, bias, y, act, plane_begin, plane_end);
    } else if (fits_rows_s2(s)) {
        depthwise_rows_s2(s, x, w, bias, y, act, plane_begin, plane_end);
    } else {
        depthwise_f32_3x3__avx2(s, x, w, bias, y, act, plane_begin, plane_end);
    }
}

}  // namespace flexpipe
