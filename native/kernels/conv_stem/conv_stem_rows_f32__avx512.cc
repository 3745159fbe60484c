// SPDX-License-Identifier: Apache-2.0
// The stem convolution by rows, AVX-512F (conv_stem_rows.h): blocks of 8 output channels x 32 output columns keep 16
// accumulators in zmm registers; per (c, kh, kw) two unaligned loads of a de-interleaved input row feed
// 16 FMAs with 8 broadcast weights, 10 loads per 16 FMAs where the AVX2 variant's 6 x 16 block needs 8
// per 12 on vectors half as wide (the same trade as the GEMM's 8x32 tile, gemm_f32_8x32__avx512.cc).
// A row's last columns are one vector ending at its end (overlapping the previous block); a row of
// fewer than 16 columns loads and stores through write masks: its lanes past the output width would
// read past the ring's zero padding (a multiple of 8 floats). Stride-2 rows are split into their
// column phases by permutes (stem_gather2 over VecAvx512).
// The blocks stay specialised rather than instances of conv_stem_rows_impl.h's: 8 channels need the
// weight rows addressed from two bases (StridedRows8; eight row pointers spill inside the tap loop), the
// blocks prefetch their next row's lines themselves, and rows end in one overlapping vector instead of a
// masked tail block (the impl's 6 x 16 blocks would leave half of each zmm empty).
#include <immintrin.h>

#include <utility>

#include "kernels/conv_stem/conv_stem_rows_impl.h"
#include "kernels/gemm/strided_rows.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {
namespace {

using RowArgs = StemBlockArgs;

// acc[r V + v] += w(r) * xv[v] for the R channels, w(r) the current weight of channel r.
template <int R, int V, size_t... Rs>
__attribute__((always_inline)) inline void fma_channels(std::index_sequence<Rs...>, __m512 (&acc)[R * V],
                                                        const StridedRows8& w, const __m512 (&xv)[V]) {
    auto one = [&](auto r) {
        const __m512 wv = _mm512_set1_ps(*w.row<decltype(r)::value>());
        constexpr int at = decltype(r)::value * V;
        for (int v = 0; v < V; ++v) acc[at + v] = _mm512_fmadd_ps(wv, xv[v], acc[at + v]);
    };
    (one(std::integral_constant<int, static_cast<int>(Rs)>{}), ...);
}

// R channels x V vectors of 16 columns from column ow; Masked: one vector of the columns in m (a row
// narrower than 16 columns). GCC keeps the masked block's acc in memory across the tap loop (the
// masked loads may alias it), so rows of 16 columns or more end with an unmasked block instead. The
// weights of the R channels (rows T floats apart, read in the taps' order c, kh, kw) advance one float
// per tap. Each block prefetches the lines it will write in the next output row (a.next): spread over
// the row's blocks, the prefetches stay within the line fill buffers that a burst of one per plane and
// line overran.
template <int R, int V, bool Masked>
inline void block(const RowArgs& a, const ConvShape& s, int64_t ow, __mmask16 m) {
    static_assert(!Masked || V == 1, "a masked block is one vector");
    const int64_t C = s.in_channels, KH = s.kernel[1], KW = s.kernel[2];
    if (a.next != 0) {
        for (int r = 0; r < R; ++r)
            for (int v = 0; v < V; ++v)
                _mm_prefetch(reinterpret_cast<const char*>(a.y + r * a.plane + a.next + ow + 16 * v), _MM_HINT_T0);
    }
    __m512 acc[R * V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r * V + v] = _mm512_set1_ps(a.bias ? a.bias[r] : 0.0f);
    StridedRows8 wr(a.w, a.T);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t kh = 0; kh < KH; ++kh) {
            const float* xr = a.rows[c * KH + kh] + ow;
            for (int64_t kw = 0; kw < KW; ++kw, wr.advance(sizeof(float))) {
                const float* xp = xr + a.koff[kw];
                __m512 xv[V];
                for (int v = 0; v < V; ++v) xv[v] = Masked ? _mm512_maskz_loadu_ps(m, xp) : _mm512_loadu_ps(xp + 16 * v);
                fma_channels<R, V>(std::make_index_sequence<R>{}, acc, wr, xv);
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
            __m512 o = acc[r * V + v];
            if (a.clamp) o = _mm512_min_ps(_mm512_set1_ps(a.hi), _mm512_max_ps(_mm512_set1_ps(a.lo), o));  // NaN stays NaN
            float* yp = a.y + r * a.plane + ow + 16 * v;
            if (Masked) _mm512_mask_storeu_ps(yp, m, o);
            else _mm512_storeu_ps(yp, o);
        }
    }
}

template <int R>
void channels(const RowArgs& a, const ConvShape& s) {
    const int64_t OW = s.out[2];
    int64_t ow = 0;
    for (; ow + 32 <= OW; ow += 32) block<R, 2, false>(a, s, ow, 0xffff);
    for (; ow + 16 <= OW; ow += 16) block<R, 1, false>(a, s, ow, 0xffff);
    if (ow == OW) return;
    // The last columns: one full vector ending at the row's end, over columns already written (the
    // same values again), or, on a row narrower than a vector, a masked one.
    if (OW >= 16) block<R, 1, false>(a, s, OW - 16, 0xffff);
    else block<R, 1, true>(a, s, 0, static_cast<__mmask16>((1u << OW) - 1u));
}

}  // namespace

void conv_stem_rows_f32__avx512(const ConvShape& s, const float* x, const float* w, const float* bias,
                                const ConvActivation& act, float* y, float* ring, int64_t row_begin,
                                int64_t row_end) {
    stem_run<8, false>(
        s, x, w, bias, act, y, ring, row_begin, row_end,
        [&](const RowArgs& a, auto r) { channels<decltype(r)::value>(a, s); }, stem_gather2<VecAvx512>);
}

}  // namespace flexpipe
