// SPDX-License-Identifier: Apache-2.0
// im2col by rows, AVX2 + FMA (see im2col_rows.h): blocks of 6 output channels x 16 output columns keep
// 12 accumulators in registers; per (c, kh, kw) two unaligned loads of a de-interleaved input row feed
// 12 FMAs with 6 broadcast weights (15 of the 16 ymm registers: 4 x 24 would need all 16 and spills). A last block of fewer than 8 columns stores through a mask (the
// ring rows are zero-padded past the output width, so its loads stay inside them). Stride-2 rows are
// split into their column phases by shuffles (gather2).
#include <immintrin.h>

#include "kernels/im2col/im2col_rows.h"

namespace flexpipe {
namespace {

using RowArgs = RowsBlockArgs;

template <int R, int V>
inline void block(const RowArgs& a, const ConvShape& s, int64_t ow, int tail) {
    const int64_t C = s.in_channels, KH = s.kernel[1], KW = s.kernel[2];
    __m256 acc[R][V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(a.bias ? a.bias[r] : 0.0f);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t t0 = (c * KH + kh) * KW;
            const float* xr = a.rows[c * KH + kh] + ow;
            for (int64_t kw = 0; kw < KW; ++kw) {
                const float* xp = xr + a.koff[kw];
                __m256 xv[V];
                for (int v = 0; v < V; ++v) xv[v] = _mm256_loadu_ps(xp + 8 * v);
                for (int r = 0; r < R; ++r) {
                    const __m256 wv = _mm256_broadcast_ss(a.w + r * a.T + t0 + kw);
                    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, xv[v], acc[r][v]);
                }
            }
        }
    }
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
            __m256 o = acc[r][v];
            if (a.clamp) o = _mm256_min_ps(_mm256_set1_ps(a.hi), _mm256_max_ps(_mm256_set1_ps(a.lo), o));  // NaN stays NaN
            float* yp = a.y + r * a.plane + ow + 8 * v;
            if (tail == 8) _mm256_storeu_ps(yp, o);
            else _mm256_maskstore_ps(yp, mask, o);
        }
    }
}

template <int R>
void channels(const RowArgs& a, const ConvShape& s) {
    const int64_t OW = s.out[2];
    int64_t ow = 0;
    for (; ow + 16 <= OW; ow += 16) block<R, 2>(a, s, ow, 8);
    for (; ow + 8 <= OW; ow += 8) block<R, 1>(a, s, ow, 8);
    if (ow < OW) block<R, 1>(a, s, ow, static_cast<int>(OW - ow));
}

// d[i] = src[2 i]: the even lanes of two vectors (a shuffle within 128-bit halves, then a cross-half
// permute), 8 at a time while the second vector ends before src[2 n - 1] (never read), the rest one by one.
void gather2(float* d, const float* src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 < n; i += 8) {
        const __m256 evens = _mm256_shuffle_ps(_mm256_loadu_ps(src + 2 * i), _mm256_loadu_ps(src + 2 * i + 8), 0x88);
        _mm256_storeu_ps(d + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), 0xd8)));
    }
    for (; i < n; ++i) d[i] = src[2 * i];
}

}  // namespace

void im2col_rows_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias,
                           const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    rows_run<6, true>(
        s, x, w, bias, act, y, ring, row_begin, row_end,
        [&](const RowArgs& a, auto r) { channels<decltype(r)::value>(a, s); }, gather2);
}

}  // namespace flexpipe
