// SPDX-License-Identifier: Apache-2.0
// AVX-512F packed-panel micro-kernel, 16x16 tile: 16 zmm accumulators (one 16-float vector per row),
// per k step one load of B and sixteen FMAs whose A operand is a broadcast from memory (contract in
// gemm.h). The tile keeps AVX2's 16-column panels, so weights packed for AVX2 (and stored so in a
// package) serve this kernel unchanged; the extra width goes into rows. On a CPU with two 512-bit FMA
// pipes (Zen 5, Sapphire Rapids) this doubles the FMAs per instruction of the 6x16 AVX2 tile;
// 16 accumulators cover 2 pipes x 4 cycles of FMA latency twice over. Partial rows and columns use
// AVX-512 write masks instead of AVX2's mask tables.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

// GCC 12's _mm512_max_ps and _mm512_min_ps pass _mm512_undefined_ps() (a self-initialised variable)
// as their unused merge source, which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace flexpipe {

namespace {

constexpr int tile_m = 16;
constexpr int tile_n = 16;

// c rows 0..R-1 = epilogue(acc) on columns [0, nr): v = (load_c ? c : 0) + acc + bias + row_bias,
// then max(lo, v), min(hi, v) ordered so that a NaN in v propagates (as in the AVX2 kernel).
template <int R>
__attribute__((always_inline)) inline void store_rows(const __m512 (&acc)[R], int64_t nr, float* c, int64_t ldc,
                                                      const GemmTileParams& p) {
    const bool full = nr == tile_n;
    const __mmask16 m = static_cast<__mmask16>(full ? 0xffffu : (1u << nr) - 1u);
    const __m512 bias = p.bias ? _mm512_maskz_loadu_ps(m, p.bias) : _mm512_setzero_ps();
    const __m512 lo = _mm512_set1_ps(p.min), hi = _mm512_set1_ps(p.max);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
        float* cr = c + r * ldc;
        __m512 v = acc[r];
        if (p.load_c) v = _mm512_add_ps(v, full ? _mm512_loadu_ps(cr) : _mm512_maskz_loadu_ps(m, cr));
        if (p.bias) v = _mm512_add_ps(v, bias);
        if (p.row_bias) v = _mm512_add_ps(v, _mm512_set1_ps(p.row_bias[r]));
        if (p.clamp) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
        if (full) {
            _mm512_storeu_ps(cr, v);
        } else {
            _mm512_mask_storeu_ps(cr, m, v);
        }
    }
}

// R valid rows (1..16): R broadcasts and R FMAs per k step, so edge tiles cost what they compute.
// Packed: a keeps the 16-row panel stride and b the 16-column one; else the strides of the params
// (A(i, p) = a[i * a_rs + p * a_ks], B(p, j) = b[p * b_ks + j]).
template <int R, bool Packed>
void tile_rows(int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               const GemmTileParams& p) {
    __m512 acc[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    if constexpr (Packed) {
        for (int64_t k = 0; k < kc; ++k) {
            const __m512 bk = _mm512_loadu_ps(b);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), bk, acc[r]);
            a += tile_m;
            b += tile_n;
        }
    } else {
        const int64_t a_rs = p.a_ks ? p.a_rs : 1, a_ks = p.a_ks ? p.a_ks : tile_m;
        const int64_t b_ks = p.b_ks ? p.b_ks : tile_n;
        const float* rows[R];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) rows[r] = a + r * a_rs;
        for (int64_t k = 0, ak = 0; k < kc; ++k, ak += a_ks) {
            const __m512 bk = _mm512_loadu_ps(b);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(rows[r][ak]), bk, acc[r]);
            b += b_ks;
        }
    }
    store_rows<R>(acc, nr, c, ldc, p);
}

template <bool Packed>
void tile(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
          const GemmTileParams& p) {
    switch (mr) {
        case 16: tile_rows<16, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 15: tile_rows<15, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 14: tile_rows<14, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 13: tile_rows<13, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 12: tile_rows<12, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 11: tile_rows<11, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 10: tile_rows<10, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 9: tile_rows<9, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 8: tile_rows<8, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 7: tile_rows<7, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 6: tile_rows<6, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 5: tile_rows<5, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 4: tile_rows<4, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 3: tile_rows<3, Packed>(nr, kc, a, b, c, ldc, p); break;
        case 2: tile_rows<2, Packed>(nr, kc, a, b, c, ldc, p); break;
        default: tile_rows<1, Packed>(nr, kc, a, b, c, ldc, p); break;
    }
}

}  // namespace

void gemm_f32_16x16__avx512(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                            int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(mr >= 1 && mr <= tile_m && nr >= 1 && nr <= tile_n && kc >= 0);
    if (p.a_ks == 0 && p.b_ks == 0) {
        tile<true>(mr, nr, kc, a, b, c, ldc, p);
    } else {
        tile<false>(mr, nr, kc, a, b, c, ldc, p);
    }
}

}  // namespace flexpipe
