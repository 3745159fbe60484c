// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, AVX2 + FMA: depthwise_impl.h over VecAvx2 (8 output columns per step), and
// an AVX2-only layout for stride 2 on small planes (below) that runs first where it fits.
#include <immintrin.h>

#include <cstring>

#include "kernels/depthwise/depthwise_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {
namespace {

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
        const float* xp = x + p * s.h * s.w;
        const DwTaps<VecAvx2> t(s, w, bias, p);
        const __m256* wv = t.wv;
        const float b = t.b;
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
                    dw_store_step<VecAvx2>(s, yp, oy, at, _mm256_add_ps(_mm256_add_ps(part[0], part[1]), part[2]), act.clamp,
                                           vlo, vhi);
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
    if (split.rows > 0) return depthwise_split_s2(s, split, x, w, bias, y, act, plane_begin, plane_end);
    depthwise_3x3_vec<VecAvx2>(s, x, w, bias, y, act, plane_begin, plane_end);
}

}  // namespace flexpipe
