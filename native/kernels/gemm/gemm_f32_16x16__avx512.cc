// SPDX-License-Identifier: Apache-2.0
// AVX-512F packed-panel micro-kernel, 16x16 tile: 16 zmm accumulators (one 16-float vector per row),
// per k step one load of B and sixteen FMAs whose A operand is a broadcast from memory (contract in
// gemm.h). The tile keeps AVX2's 16-column panels, so weights packed for AVX2 (and stored so in a
// package) serve this kernel unchanged; the extra width goes into rows. On a CPU with two 512-bit FMA
// pipes (Zen 5, Sapphire Rapids) this doubles the FMAs per instruction of the 6x16 AVX2 tile;
// 16 accumulators cover 2 pipes x 4 cycles of FMA latency twice over. Partial rows and columns use
// AVX-512 write masks instead of AVX2's mask tables.
#include <immintrin.h>

#include <utility>

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

// The A rows of a tile read in place, rows a_rs floats apart. Sixteen row pointers (or offsets) do not
// fit in the general registers next to B's pointer and the loop counters, and the compiler spills them
// to the stack inside the k loop. Instead every row is addressed as base + index * scale from four
// bases (rows 0, 5, 10, 15) and two index registers (x = the row stride in bytes, y = 3x):
//   0: q0        1: q0+x      2: q0+2x     3: q0+y      4: q0+4x     5: q1        6: q0+2y     7: q1+2x
//   8: q0+8x     9: q1+4x    10: q2       11: q1+2y    12: q0+4y    13: q1+8x    14: q2+4x    15: q3
struct InPlaceRows {
    const char* q0;
    const char* q1;
    const char* q2;
    const char* q3;
    int64_t x, y;

    InPlaceRows(const float* a, int64_t a_rs)
        : q0(reinterpret_cast<const char*>(a)), q1(q0 + 5 * 4 * a_rs), q2(q0 + 10 * 4 * a_rs),
          q3(q0 + 15 * 4 * a_rs), x(4 * a_rs), y(12 * a_rs) {}

    template <int r>
    __attribute__((always_inline)) const float* row() const {
        const char* at;
        if constexpr (r == 0) at = q0;
        else if constexpr (r == 1) at = q0 + x;
        else if constexpr (r == 2) at = q0 + 2 * x;
        else if constexpr (r == 3) at = q0 + y;
        else if constexpr (r == 4) at = q0 + 4 * x;
        else if constexpr (r == 5) at = q1;
        else if constexpr (r == 6) at = q0 + 2 * y;
        else if constexpr (r == 7) at = q1 + 2 * x;
        else if constexpr (r == 8) at = q0 + 8 * x;
        else if constexpr (r == 9) at = q1 + 4 * x;
        else if constexpr (r == 10) at = q2;
        else if constexpr (r == 11) at = q1 + 2 * y;
        else if constexpr (r == 12) at = q0 + 4 * y;
        else if constexpr (r == 13) at = q1 + 8 * x;
        else if constexpr (r == 14) at = q2 + 4 * x;
        else at = q3;
        return reinterpret_cast<const float*>(at);
    }
    __attribute__((always_inline)) void advance(int64_t bytes) { q0 += bytes, q1 += bytes, q2 += bytes, q3 += bytes; }
};

// acc[r] += A(r, k) * bv for the R rows: A(r, k) = ak[r] (packed) or *rows.row<r>() (in place, rows at k).
template <int R, size_t... Rs>
__attribute__((always_inline)) inline void fma_packed(std::index_sequence<Rs...>, __m512 (&acc)[R], const float* ak,
                                                      __m512 bv) {
    ((acc[Rs] = _mm512_fmadd_ps(_mm512_set1_ps(ak[Rs]), bv, acc[Rs])), ...);
}
template <int R, size_t... Rs>
__attribute__((always_inline)) inline void fma_in_place(std::index_sequence<Rs...>, __m512 (&acc)[R],
                                                        const InPlaceRows& rows, __m512 bv) {
    ((acc[Rs] = _mm512_fmadd_ps(_mm512_set1_ps(*rows.row<static_cast<int>(Rs)>()), bv, acc[Rs])), ...);
}

// R valid rows (1..16): R broadcasts and R FMAs per k step, so edge tiles cost what they compute.
// Every element is summed over k in the same order whatever R is, so a product computed in slices
// (FlexNN's weight and input slices, threads' rectangles) equals the whole one bit for bit; splitting
// k across extra accumulators for short tiles (more FMA chains for M = 1) would break that.
// Packed: a keeps the 16-row panel stride and b the 16-column one; else the strides of the params
// (A(i, p) = a[i * a_rs + p * a_ks], B(p, j) = b[p * b_ks + j]).
template <int R, bool Packed>
void tile_rows(int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               const GemmTileParams& p) {
    constexpr auto rs = std::make_index_sequence<R>{};
    __m512 acc[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const int64_t b_ks = Packed ? tile_n : (p.b_ks ? p.b_ks : tile_n);
    if constexpr (Packed) {
        for (int64_t k = 0; k < kc; ++k, a += tile_m, b += b_ks) fma_packed<R>(rs, acc, a, _mm512_loadu_ps(b));
    } else {
        const int64_t a_ks_bytes = static_cast<int64_t>(sizeof(float)) * (p.a_ks ? p.a_ks : tile_m);
        InPlaceRows rows(a, p.a_ks ? p.a_rs : 1);
        for (int64_t k = 0; k < kc; ++k, rows.advance(a_ks_bytes), b += b_ks)
            fma_in_place<R>(rs, acc, rows, _mm512_loadu_ps(b));
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
