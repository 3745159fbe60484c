// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, AVX2 + FMA: 8 output columns per step.
//
// Small planes (MobileNet's 7x7 to 112x112) go through a zero-padded copy of the plane on the stack:
// every output column is then an interior one (no bounds checks, no scalar border pixels, which on a
// 7x7 plane were all of them), at the price of copying the input once. Larger planes, where borders
// are a small share of the row, vectorize the interior in place and compute the borders like __ref.
#include <immintrin.h>

#include <cstring>

#include "common/macros.h"
#include "kernels/depthwise/depthwise_padded.h"

namespace flexpipe {
namespace {

// One output pixel with bounds-checked taps (borders and the row remainder); rows[ky] is null for
// input rows outside the image.
inline float pixel(const DepthwiseShape& s, const float* const* rows, const float* wc, float b, int64_t ox) {
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

// Stride 2: lanes i of e0, o1, e2 are r[2i], r[2i + 1], r[2i + 2] for i < 8 (reads r[0..16]).
inline void deinterleave(const float* r, __m256* e0, __m256* o1, __m256* e2) {
    const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
    const __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // r0 r2 r8 r10 | r4 r6 r12 r14
    const __m256 od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    *e0 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
    *o1 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
    const __m256 rot = _mm256_permutevar8x32_ps(*e0, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
    *e2 = _mm256_blend_ps(rot, _mm256_broadcast_ss(r + 16), 0x80);
}

inline float clampf(float v, const ConvActivation& act) {
    return act.clamp ? (v < act.lo ? act.lo : (v > act.hi ? act.hi : v)) : v;
}

// Copies row src (w floats) to dst in 8-float steps, the last one overlapping, so only dst[0, w)
// is written; a row narrower than 8 is one masked load and one store that also writes zeros to
// dst[w, 8) (the scratch's right padding, which must be zero anyway).
inline void copy_row(float* dst, const float* src, int64_t w) {
    if (w < 8) {
        if (w <= 0) return;
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(w)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_storeu_ps(dst, _mm256_maskload_ps(src, mask));
        return;
    }
    for (int64_t i = 0; i + 8 <= w; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
    if (w % 8) _mm256_storeu_ps(dst + w - 8, _mm256_loadu_ps(src + w - 8));
}

// Eight outputs from input rows in[0..2], each read from its element 0 on (stride 1: 10 floats,
// stride 2: 17); a null row is padding and contributes nothing. One accumulator per kernel row:
// three short FMA chains instead of one of nine.
inline __m256 step8(const float* const* in, int64_t stride, const __m256* wv, float b) {
    __m256 part[3] = {_mm256_set1_ps(b), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int ky = 0; ky < 3; ++ky) {
        const float* r = in[ky];
        if (!r) continue;
        __m256 t0, t1, t2;
        if (stride == 1) {
            t0 = _mm256_loadu_ps(r);
            t1 = _mm256_loadu_ps(r + 1);
            t2 = _mm256_loadu_ps(r + 2);
        } else {
            deinterleave(r, &t0, &t1, &t2);
        }
        part[ky] = _mm256_fmadd_ps(wv[ky * 3], t0, part[ky]);
        part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 1], t1, part[ky]);
        part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 2], t2, part[ky]);
    }
    return _mm256_add_ps(_mm256_add_ps(part[0], part[1]), part[2]);
}

// Eight outputs starting at scratch column `first` of rows r0, r0 + 1, r0 + 2 (all inside the scratch).
inline __m256 padded_step(const float* r0, int64_t cols, int64_t first, int64_t stride, const __m256* wv, float b) {
    const float* in[3] = {r0 + first, r0 + cols + first, r0 + 2 * cols + first};
    return step8(in, stride, wv, b);
}

// Stride 1: eight outputs of two consecutive rows from scratch rows r0 .. r0 + 3. Each input row is
// loaded once for both output rows (12 loads for 18 FMAs instead of 18).
inline void padded_step2(const float* r0, int64_t cols, int64_t first, const __m256* wv, float b, __m256* top,
                         __m256* bottom) {
    __m256 t[3] = {_mm256_set1_ps(b), _mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 u[3] = {_mm256_set1_ps(b), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int iy = 0; iy < 4; ++iy) {
        const float* r = r0 + iy * cols + first;
        const __m256 x0 = _mm256_loadu_ps(r), x1 = _mm256_loadu_ps(r + 1), x2 = _mm256_loadu_ps(r + 2);
        if (iy < 3) {  // kernel row iy of the top output row
            t[iy] = _mm256_fmadd_ps(wv[iy * 3], x0, t[iy]);
            t[iy] = _mm256_fmadd_ps(wv[iy * 3 + 1], x1, t[iy]);
            t[iy] = _mm256_fmadd_ps(wv[iy * 3 + 2], x2, t[iy]);
        }
        if (iy > 0) {  // kernel row iy - 1 of the bottom one
            const int ky = iy - 1;
            u[ky] = _mm256_fmadd_ps(wv[ky * 3], x0, u[ky]);
            u[ky] = _mm256_fmadd_ps(wv[ky * 3 + 1], x1, u[ky]);
            u[ky] = _mm256_fmadd_ps(wv[ky * 3 + 2], x2, u[ky]);
        }
    }
    *top = _mm256_add_ps(_mm256_add_ps(t[0], t[1]), t[2]);
    *bottom = _mm256_add_ps(_mm256_add_ps(u[0], u[1]), u[2]);
}

// Stores the eight outputs of row oy of plane yp at column at, clamped; a row narrower than 8 spills
// into the following rows of the plane, which are computed (and rewritten) later, so only the plane's
// tail goes through a small buffer.
inline void store_step(const DepthwiseShape& s, float* yp, int64_t oy, int64_t at, __m256 acc, bool clamp, __m256 vlo,
                       __m256 vhi) {
    if (clamp) acc = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));  // NaN stays NaN
    float* yr = yp + oy * s.ow;
    if (padded_store_whole<8>(s, oy, at)) {
        _mm256_storeu_ps(yr + at, acc);
    } else {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, acc);
        for (int64_t i = 0; i < s.ow; ++i) yr[i] = lanes[i];
    }
}

void depthwise_padded(const DepthwiseShape& s, const PaddedPlane& g, const float* x, const float* w,
                      const float* bias, float* y, const ConvActivation& act, int64_t plane_begin,
                      int64_t plane_end) {
    alignas(32) float pad[PaddedPlane::capacity];
    std::memset(pad, 0, static_cast<size_t>(g.rows * g.cols) * sizeof(float));
    const __m256 vlo = _mm256_set1_ps(act.lo), vhi = _mm256_set1_ps(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        padded_copy_in(s, g, xp, pad, copy_row);
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        __m256 wv[9];
        for (int i = 0; i < 9; ++i) wv[i] = _mm256_set1_ps(wc[i]);
        float* yp = y + p * depthwise_y_plane(s);
        auto store = [&](int64_t oy, int64_t at, __m256 acc) { store_step(s, yp, oy, at, acc, act.clamp, vlo, vhi); };
        padded_rows<8>(
            s, g, pad,
            [&](const float* r0, int64_t oy, int64_t at) {
                __m256 top, bottom;
                padded_step2(r0, g.cols, at, wv, b, &top, &bottom);
                store(oy, at, top);
                store(oy + 1, at, bottom);
            },
            [&](const float* r0, int64_t oy, int64_t at) {
                store(oy, at, padded_step(r0, g.cols, at * s.stride, s.stride, wv, b));
            });
    }
}

// Stride 2 on small planes: the zero-padded plane is split by column parity as it is copied in, so
// the three taps of a kernel row are plain loads (x[2i] = even[i], x[2i + 1] = odd[i], x[2i + 2] =
// even[i + 1]) instead of a de-interleave of every input row for every output row that reads it.
// Scratch row r (input row r - pad_top) holds its even columns at [0, half) and its odd ones at
// [half, 2 half); padded column q = input column q - pad_left.
constexpr int64_t split_band = 8;  // output rows per band of depthwise_split_s2

struct SplitPlane {
    int64_t rows = 0, half = 0;  // rows = 0: does not fit
};

inline SplitPlane split_plane(const DepthwiseShape& s) {
    SplitPlane g;
    const int64_t chunks = (s.ow + 7) / 8;
    const int64_t reads = 8 * chunks + 1;              // even[i + 1] of the last step
    const int64_t copies = (s.pad_left + s.w + 1) / 2;  // parities of every copied column
    g.half = ((reads > copies ? reads : copies) + 7) / 8 * 8;
    g.rows = (s.oh - 1) * 2 + 3;
    if (s.stride != 2 || s.pad_left < 0 || s.pad_top < 0 || g.rows * 2 * g.half > PaddedPlane::capacity) g.rows = 0;
    return g;
}

// The lanes of a 16-column step at input column `at` that lie inside a row of w columns: the masks
// of its two 8-float loads.
struct StepMask {
    __m256i a, b;
};
inline StepMask step_mask(int64_t at, int64_t w) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lim = _mm256_set1_epi32(static_cast<int>(w));
    auto inside = [&](int64_t from) {  // lanes whose input column from + i lies in [0, w)
        const __m256i i = _mm256_add_epi32(lane, _mm256_set1_epi32(static_cast<int>(from)));
        return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), i), _mm256_cmpgt_epi32(lim, i));
    };
    return {inside(at), inside(at + 8)};
}

// The steps of split_row that reach past an end of the row, the same for every row of a layer: the
// first (left padding) and the last (the row's tail). Their masks are built once per call instead of
// once per row. MobileNetV2's four stride-2 depthwise layers, 1 thread, both variants alternated in
// one process (an ad hoc A/B of inferProfiled op times): 0.698 vs 0.718 ms.
struct SplitEdges {
    int64_t last_k = 0;
    StepMask first, last;
};
inline SplitEdges split_edges(int64_t w, int64_t pad_left, int64_t half) {
    SplitEdges e;
    for (int64_t k = 0; k < half && 2 * k - pad_left < w; k += 8) e.last_k = k;
    e.first = step_mask(-pad_left, w);
    e.last = step_mask(2 * e.last_k - pad_left, w);
    return e;
}

// Input row src (w floats) into the even and odd halves of its scratch row: 16 padded columns per step,
// split with two shuffles and two lane permutes each. Steps that reach past either end of the row read
// through a mask (columns outside the row read as zero); the others with plain loads.
inline void split_row(float* even, float* odd, const float* src, int64_t w, int64_t pad_left, int64_t half,
                      const SplitEdges& edges) {
    for (int64_t k = 0; k < half && 2 * k - pad_left < w; k += 8) {
        const int64_t at = 2 * k - pad_left;  // input column of padded column 2k
        __m256 a, b;
        if (at >= 0 && at + 16 <= w) {
            a = _mm256_loadu_ps(src + at);
            b = _mm256_loadu_ps(src + at + 8);
        } else {
            const StepMask m = k == 0 ? edges.first : k == edges.last_k ? edges.last : step_mask(at, w);
            a = _mm256_maskload_ps(src + at, m.a);
            b = _mm256_maskload_ps(src + at + 8, m.b);
        }
        const __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // q0 q2 q8 q10 | q4 q6 q12 q14
        const __m256 od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(even + k, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(odd + k, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0))));
    }
}

void depthwise_split_s2(const DepthwiseShape& s, const SplitPlane& g, const float* x, const float* w,
                        const float* bias, float* y, const ConvActivation& act, int64_t plane_begin,
                        int64_t plane_end) {
    alignas(32) float pad[PaddedPlane::capacity];
    const int64_t row = 2 * g.half;
    const int64_t band_rows = 2 * split_band + 1 < g.rows ? 2 * split_band + 1 : g.rows;  // scratch rows in use
    std::memset(pad, 0, static_cast<size_t>(band_rows * row) * sizeof(float));
    const __m256 vlo = _mm256_set1_ps(act.lo), vhi = _mm256_set1_ps(act.hi);
    const SplitEdges edges = split_edges(s.w, s.pad_left, g.half);
    // Output rows in bands of split_band: a band splits only the 2 band + 1 input rows it reads, so on
    // a large plane (112x112 -> 56x56: 57 KiB split) the split rows are still in L1 when the band's
    // outputs read them, and only those rows are zeroed. The row shared by two bands is split twice.
    // MobileNetV2's four stride-2 depthwise layers, 1 thread, banded vs whole-plane split alternated in
    // one process (an ad hoc A/B of inferProfiled op times, 150 runs each): 0.656 vs 0.693 ms. The
    // layer alone: node dist/bench/kernels/conv.bench.js --layers dw-s2. The fit test (split_plane)
    // still asks for the whole plane, so planes larger than 16384 split floats keep the in-place path.
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        __m256 wv[9];
        for (int i = 0; i < 9; ++i) wv[i] = _mm256_set1_ps(wc[i]);
        float* yp = y + p * depthwise_y_plane(s);
        for (int64_t oy0 = 0; oy0 < s.oh; oy0 += split_band) {
            const int64_t oy1 = oy0 + split_band < s.oh ? oy0 + split_band : s.oh;
            for (int64_t r = 2 * oy0; r <= 2 * (oy1 - 1) + 2; ++r) {  // padded rows of the band
                float* even = pad + (r - 2 * oy0) * row;
                const int64_t iy = r - s.pad_top;
                if (iy >= 0 && iy < s.h) split_row(even, even + g.half, xp + iy * s.w, s.w, s.pad_left, g.half, edges);
                else std::memset(even, 0, static_cast<size_t>(row) * sizeof(float));
            }
            for (int64_t oy = oy0; oy < oy1; ++oy) {
                const float* r0 = pad + 2 * (oy - oy0) * row;
                for (int64_t ox = 0; ox < s.ow; ox += 8) {
                    const int64_t at = padded_step_at<8>(s, ox);
                    __m256 part[3] = {_mm256_set1_ps(b), _mm256_setzero_ps(), _mm256_setzero_ps()};
                    for (int ky = 0; ky < 3; ++ky) {
                        const float* e = r0 + ky * row + at;
                        part[ky] = _mm256_fmadd_ps(wv[ky * 3], _mm256_loadu_ps(e), part[ky]);
                        part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 1], _mm256_loadu_ps(e + g.half), part[ky]);
                        part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 2], _mm256_loadu_ps(e + 1), part[ky]);
                    }
                    store_step(s, yp, oy, at, _mm256_add_ps(_mm256_add_ps(part[0], part[1]), part[2]), act.clamp, vlo, vhi);
                }
            }
        }
    }
}

}  // namespace

void depthwise_f32_3x3__avx2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    const SplitPlane split = split_plane(s);
    if (split.rows > 0) {
        depthwise_split_s2(s, split, x, w, bias, y, act, plane_begin, plane_end);
        return;
    }
    const PaddedPlane g = padded_plane<8>(s);
    if (g.rows > 0) {
        depthwise_padded(s, g, x, w, bias, y, act, plane_begin, plane_end);
        return;
    }
    int64_t lo, hi;
    depthwise_interior(s, &lo, &hi);
    const __m256 vlo = _mm256_set1_ps(act.lo), vhi = _mm256_set1_ps(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        __m256 wv[9];
        for (int i = 0; i < 9; ++i) wv[i] = _mm256_set1_ps(wc[i]);
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            const float* rows[3];
            for (int ky = 0; ky < 3; ++ky) {
                const int64_t iy = oy * s.stride - s.pad_top + ky;
                rows[ky] = iy >= 0 && iy < s.h ? xp + iy * s.w : nullptr;
            }
            float* yr = y + p * depthwise_y_plane(s) + oy * s.ow;
            for (int64_t ox = 0; ox < lo; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
            // Interior in steps of 8; the last step overlaps the previous one (outputs are written, not
            // accumulated, so recomputing a few is harmless) instead of a scalar tail.
            for (int64_t ox = lo; ox < hi; ox += 8) {
                if (ox + 8 > hi) {
                    if (hi - lo < 8) {
                        for (; ox < hi; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
                        break;
                    }
                    ox = hi - 8;
                }
                const int64_t at = ox * s.stride - s.pad_left;
                const float* in[3] = {rows[0] ? rows[0] + at : nullptr, rows[1] ? rows[1] + at : nullptr,
                                      rows[2] ? rows[2] + at : nullptr};
                __m256 acc = step8(in, s.stride, wv, b);
                if (act.clamp) acc = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));  // NaN stays NaN
                _mm256_storeu_ps(yr + ox, acc);
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
        }
    }
}

}  // namespace flexpipe
