// SPDX-License-Identifier: Apache-2.0
// im2col by rows, AVX-512F (see im2col_rows.h): blocks of 8 output channels x 32 output columns keep 16
// accumulators in zmm registers; per (c, kh, kw) two unaligned loads of a de-interleaved input row feed
// 16 FMAs with 8 broadcast weights, 10 loads per 16 FMAs where the AVX2 variant's 6 x 16 block needs 8
// per 12 on vectors half as wide (the same trade as the GEMM's 8x32 tile, gemm_f32_8x32__avx512.cc).
// A last block of fewer than 16 columns loads and stores through write masks: its lanes past the
// output width would read past the ring's zero padding (a multiple of 8 floats).
#include <immintrin.h>

#include <utility>

#include "kernels/gemm/strided_rows.h"
#include "kernels/im2col/im2col_rows.h"

// GCC 12's _mm512_max_ps and _mm512_min_ps pass _mm512_undefined_ps() (a self-initialised variable)
// as their unused merge source, which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace flexpipe {
namespace {

using RowArgs = RowsBlockArgs;

// acc[r][v] += w(r) * xv[v] for the R channels, w(r) the current weight of channel r.
template <int R, int V, size_t... Rs>
__attribute__((always_inline)) inline void fma_channels(std::index_sequence<Rs...>, __m512 (&acc)[R][V],
                                                        const StridedRows8& w, const __m512 (&xv)[V]) {
    auto one = [&](auto r) {
        const __m512 wv = _mm512_set1_ps(*w.row<decltype(r)::value>());
        for (int v = 0; v < V; ++v) acc[decltype(r)::value][v] = _mm512_fmadd_ps(wv, xv[v], acc[decltype(r)::value][v]);
    };
    (one(std::integral_constant<int, static_cast<int>(Rs)>{}), ...);
}

// R channels x V vectors of 16 columns from column ow; `tail` < 16: one masked vector of that many.
// The weights of the R channels (rows T floats apart, read in the taps' order c, kh, kw) advance one
// float per tap.
template <int R, int V>
inline void block(const RowArgs& a, const ConvShape& s, int64_t ow, int tail) {
    const int64_t C = s.in_channels, KH = s.kernel[1], KW = s.kernel[2];
    const __mmask16 m = static_cast<__mmask16>(tail >= 16 ? 0xffffu : (1u << tail) - 1u);
    __m512 acc[R][V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_set1_ps(a.bias ? a.bias[r] : 0.0f);
    StridedRows8 wr(a.w, a.T);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t kh = 0; kh < KH; ++kh) {
            const float* xr = a.rows[c * KH + kh] + ow;
            for (int64_t kw = 0; kw < KW; ++kw, wr.advance(sizeof(float))) {
                const float* xp = xr + a.koff[kw];
                __m512 xv[V];
                for (int v = 0; v < V; ++v) xv[v] = tail >= 16 ? _mm512_loadu_ps(xp + 16 * v) : _mm512_maskz_loadu_ps(m, xp);
                fma_channels<R, V>(std::make_index_sequence<R>{}, acc, wr, xv);
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
            __m512 o = acc[r][v];
            if (a.clamp) o = _mm512_min_ps(_mm512_set1_ps(a.hi), _mm512_max_ps(_mm512_set1_ps(a.lo), o));  // NaN stays NaN
            float* yp = a.y + r * a.plane + ow + 16 * v;
            if (tail >= 16) _mm512_storeu_ps(yp, o);
            else _mm512_mask_storeu_ps(yp, m, o);
        }
    }
}

template <int R>
void channels(const RowArgs& a, const ConvShape& s) {
    const int64_t OW = s.out[2];
    int64_t ow = 0;
    for (; ow + 32 <= OW; ow += 32) block<R, 2>(a, s, ow, 16);
    for (; ow + 16 <= OW; ow += 16) block<R, 1>(a, s, ow, 16);
    if (ow < OW) block<R, 1>(a, s, ow, static_cast<int>(OW - ow));
}

}  // namespace

void im2col_rows_f32__avx512(const ConvShape& s, const float* x, const float* w, const float* bias,
                             const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    rows_run<8>(s, x, w, bias, act, y, ring, row_begin, row_end,
                [&](const RowArgs& a, auto r) { channels<decltype(r)::value>(a, s); });
}

}  // namespace flexpipe
