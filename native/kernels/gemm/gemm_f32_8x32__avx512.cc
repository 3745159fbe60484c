// SPDX-License-Identifier: Apache-2.0
// AVX-512F packed-panel micro-kernel, 8x32 tile: 8 rows x two 16-float vectors, 16 zmm accumulators.
// Per k step: two loads of B and, per row, one broadcast of A that feeds two FMAs, so 10 loads per
// 16 FMAs. A 16x16 tile (one B vector, 16 broadcasts) needs 17 loads per 16 FMAs and is bound by the
// load pipes: on Zen 5 it reached 150-185 GFLOP/s where 8x32 reaches 205-250 (an ad hoc C++ loop over
// in-place tiles, M x N x K = 96x192x576, 336x192x96, 1272x64x320). The two vectors are two of the
// 16-column panels of the AVX2 layout, b and b + b_next (gemm.h), so weights packed on an AVX2
// machine (and stored so in a package) serve this kernel unchanged. Partial rows and columns use
// write masks; a tile of at most 16 columns runs one vector.
#include <immintrin.h>

#include <utility>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/strided_rows.h"

// GCC 12's _mm512_max_ps and _mm512_min_ps pass _mm512_undefined_ps() (a self-initialised variable)
// as their unused merge source, which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace flexpipe {

namespace {

constexpr int tile_m = 8;
constexpr int panel_n = 16;  // columns per B panel and per vector

// c rows 0..R-1, vector v = columns [16 v, 16 v + 16) clipped to nr: epilogue(acc) as in gemm.h,
// v = (load_c ? c : add ? add : 0) + acc + bias + row_bias, then max(lo, v), min(hi, v) ordered so that a NaN
// in v propagates (as in the AVX2 kernel).
template <int R, int V>
__attribute__((always_inline)) inline void store_rows(const __m512 (&acc)[R][V], int64_t nr, float* c, int64_t ldc,
                                                      const GemmTileParams& p) {
    const __m512 lo = _mm512_set1_ps(p.min), hi = _mm512_set1_ps(p.max);
    const float* init = p.load_c ? c : p.add;
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
        const int64_t cols = nr - v * panel_n < panel_n ? nr - v * panel_n : panel_n;
        const bool full = cols == panel_n;
        const __mmask16 m = static_cast<__mmask16>(full ? 0xffffu : (1u << cols) - 1u);
        const __m512 bias = p.bias ? _mm512_maskz_loadu_ps(m, p.bias + v * panel_n) : _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            float* cr = c + r * ldc + v * panel_n;
            __m512 x = acc[r][v];
            if (init) {
                const float* ir = init + r * ldc + v * panel_n;
                x = _mm512_add_ps(x, full ? _mm512_loadu_ps(ir) : _mm512_maskz_loadu_ps(m, ir));
            }
            if (p.bias) x = _mm512_add_ps(x, bias);
            if (p.row_bias) x = _mm512_add_ps(x, _mm512_set1_ps(p.row_bias[r]));
            if (p.clamp) x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
            if (full) {
                _mm512_storeu_ps(cr, x);
            } else {
                _mm512_mask_storeu_ps(cr, m, x);
            }
        }
    }
}

// acc[r][v] += A(r, k) * bv[v] for the R rows.
template <int R, int V, size_t... Rs>
__attribute__((always_inline)) inline void fma_rows(std::index_sequence<Rs...>, __m512 (&acc)[R][V],
                                                    const StridedRows8& rows, const __m512 (&bv)[V]) {
    auto one = [&](auto r) {
        const __m512 av = _mm512_set1_ps(*rows.row<decltype(r)::value>());
        acc[decltype(r)::value][0] = _mm512_fmadd_ps(av, bv[0], acc[decltype(r)::value][0]);
        if constexpr (V == 2) acc[decltype(r)::value][1] = _mm512_fmadd_ps(av, bv[1], acc[decltype(r)::value][1]);
    };
    (one(std::integral_constant<int, static_cast<int>(Rs)>{}), ...);
}

// R valid rows (1..8), V vectors (1: nr <= 16; 2: the second at b + b_next). Every element is summed
// over k in the same order whatever R, V and the tile's place, so a product computed in slices
// (FlexNN's weight and input slices, threads' rectangles) equals the whole one bit for bit.
template <int R, int V>
void tile_rows(int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               const GemmTileParams& p) {
    __m512 acc[R][V];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
    const int64_t b_ks = p.b_ks ? p.b_ks : panel_n;
    const float* b1 = b + (V == 2 ? p.b_next : 0);
    StridedRows8 rows(a, p.a_ks ? p.a_rs : 1);  // a packed panel: rows 1 float apart
    const int64_t a_step = static_cast<int64_t>(sizeof(float)) * (p.a_ks ? p.a_ks : tile_m);
    for (int64_t k = 0; k < kc; ++k, rows.advance(a_step), b += b_ks, b1 += b_ks) {
        __m512 bv[V];
        bv[0] = _mm512_loadu_ps(b);
        if constexpr (V == 2) bv[1] = _mm512_loadu_ps(b1);
        fma_rows<R, V>(std::make_index_sequence<R>{}, acc, rows, bv);
    }
    store_rows<R, V>(acc, nr, c, ldc, p);
}

template <int V>
void tile(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
          const GemmTileParams& p) {
    switch (mr) {
        case 8: tile_rows<8, V>(nr, kc, a, b, c, ldc, p); break;
        case 7: tile_rows<7, V>(nr, kc, a, b, c, ldc, p); break;
        case 6: tile_rows<6, V>(nr, kc, a, b, c, ldc, p); break;
        case 5: tile_rows<5, V>(nr, kc, a, b, c, ldc, p); break;
        case 4: tile_rows<4, V>(nr, kc, a, b, c, ldc, p); break;
        case 3: tile_rows<3, V>(nr, kc, a, b, c, ldc, p); break;
        case 2: tile_rows<2, V>(nr, kc, a, b, c, ldc, p); break;
        default: tile_rows<1, V>(nr, kc, a, b, c, ldc, p); break;
    }
}

}  // namespace

void gemm_f32_8x32__avx512(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                           int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(mr >= 1 && mr <= tile_m && nr >= 1 && nr <= 2 * panel_n && kc >= 0);
    if (nr > panel_n) {
        tile<2>(mr, nr, kc, a, b, c, ldc, p);
    } else {
        tile<1>(mr, nr, kc, a, b, c, ldc, p);
    }
}

}  // namespace flexpipe
