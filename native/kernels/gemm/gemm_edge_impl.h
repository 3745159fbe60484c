// SPDX-License-Identifier: Apache-2.0
// The GEMM kernels around the packed micro-kernels, written once over a vector type (simd/vec.h) where the
// ISAs share their shape: the row dots of a narrow right edge (gemm.h), the narrow GEMM tile and its
// transposing store (narrow.h), and the A-panel packer's full panels (gemm.h). The micro-kernels
// themselves (6x16 AVX2, 8x12 NEON, 8x32 AVX-512) keep their own files: their register tiles differ in
// shape, not only in width (NEON multiplies by lane of a loaded A vector, AVX-512 spans two B panels).
// Everything here has internal linkage (anonymous namespace; STYLE.md §3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/narrow.h"

namespace flexpipe {
namespace {

// Row dots: per row, one L-lane accumulator per edge column over k, then a horizontal sum, the scalar
// remainder of k, and the shared scalar epilogue.
template <class Vec, int C>
void gemm_dot_rows(int64_t rows, int64_t k, const float* a, int64_t a_rs, const float* bt, float* c, int64_t ldc,
                   const GemmTileParams& p) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    for (int64_t i = 0; i < rows; ++i) {
        const float* ar = a + i * a_rs;
        V acc[C];
        for (int t = 0; t < C; ++t) acc[t] = Vec::zero();
        int64_t q = 0;
        for (; q + L <= k; q += L) {
            const V av = Vec::load(ar + q);
            for (int t = 0; t < C; ++t) acc[t] = Vec::fma(av, Vec::load(bt + t * k + q), acc[t]);
        }
        for (int t = 0; t < C; ++t) {
            float s = Vec::hsum(acc[t]);
            for (int64_t r = q; r < k; ++r) s += ar[r] * bt[t * k + r];
            gemm_dot_store(s, i, t, c, ldc, p);
        }
    }
}

template <class Vec>
void gemm_dot_vec(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt, float* c,
                  int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(cols >= 1 && cols <= gemm_dot_max_cols && k >= 0);
    gemm_dot_cols(cols, [&](auto n) { gemm_dot_rows<Vec, decltype(n)::value>(rows, k, a, a_rs, bt, c, ldc, p); });
}

// Narrow GEMM, one k step: acc[j][v] += a_v * b[j] for the P columns, each broadcast once and feeding the
// NV vectors of A (one fold per column, so every index is a constant and acc stays in registers).
template <class Vec, int NV, int P, size_t... Js>
__attribute__((always_inline)) inline void narrow_step(std::index_sequence<Js...>, typename Vec::V (&acc)[P][NV],
                                                       const typename Vec::V (&av)[NV], const float* b) {
    auto one = [&](auto j) {
        constexpr int J = decltype(j)::value;
        const typename Vec::V bj = Vec::load1(b + J);
        for (int v = 0; v < NV; ++v) acc[J][v] = Vec::fma(av[v], bj, acc[J][v]);
    };
    (one(std::integral_constant<int, static_cast<int>(Js)>{}), ...);
}

// NV vectors of rows (NV L of them: one panel of 16, or two on AVX-512, the second at a + a_next) by P
// columns of the Cᵀ tile t (narrow.h).
template <class Vec, int NV, int P>
void narrow_tile(int64_t kc, const float* a, int64_t a_next, const float* b, const int64_t* b_off, float* t,
                 bool accumulate) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes, per_panel = narrow_panel_rows / L;
    auto at = [&](int v) { return (v / per_panel) * a_next + (v % per_panel) * L; };  // vector v's offset in A
    V acc[P][NV];
#pragma GCC unroll 14
    for (int j = 0; j < P; ++j)
        for (int v = 0; v < NV; ++v) acc[j][v] = accumulate ? Vec::load(t + j * narrow_ldt + v * L) : Vec::zero();
    for (int64_t p = 0; p < kc; ++p, a += narrow_panel_rows) {
        V av[NV];
        for (int v = 0; v < NV; ++v) av[v] = Vec::load(a + at(v));
        narrow_step<Vec, NV, P>(std::make_index_sequence<P>{}, acc, av, b + b_off[p]);
    }
#pragma GCC unroll 14
    for (int j = 0; j < P; ++j)
        for (int v = 0; v < NV; ++v) Vec::store(t + j * narrow_ldt + v * L, acc[j][v]);
}

// The narrow micro-kernel of a table with narrow_cols = MaxCols and narrow_panels = MaxPanels: one panel
// per tile (AVX2, NEON: its 16 rows are 16 / L vectors), or both panels in one tile (AVX-512).
template <class Vec, int MaxCols, int MaxPanels>
void gemm_narrow_vec(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next, const float* b,
                     const int64_t* b_off, float* t, bool accumulate) {
    constexpr int per_panel = narrow_panel_rows / Vec::lanes;
    FLEXPIPE_DCHECK(panels >= 1 && panels <= 2 && cols >= 1 && cols <= MaxCols && kc >= 0);
    if constexpr (MaxPanels == 1) {
        narrow_each_panel<MaxCols>(panels, cols, [&](auto p, int64_t v) {
            narrow_tile<Vec, per_panel, decltype(p)::value>(kc, a + v * a_next, a_next, b, b_off,
                                                           t + v * narrow_panel_rows, accumulate);
        });
    } else {
        narrow_cols<MaxCols>(cols, [&](auto p) {
            constexpr int P = decltype(p)::value;
            if (panels == 2) narrow_tile<Vec, 2 * per_panel, P>(kc, a, a_next, b, b_off, t, accumulate);
            else narrow_tile<Vec, per_panel, P>(kc, a, a_next, b, b_off, t, accumulate);
        });
    }
}

// The narrow epilogue: L columns of the Cᵀ tile (L rows each) are one L x L block, transposed in registers
// into L rows of C; a block narrower than L columns goes through load_first / store_first. The clamp is
// the ISA's max/min with x second, so a NaN passes (contract in narrow.h).
template <class Vec>
void gemm_narrow_store_vec(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add, float* c,
                           int64_t c_rs, bool clamp, float lo, float hi) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    FLEXPIPE_DCHECK(rows >= 0 && rows <= narrow_ldt && cols >= 0);
    const V vlo = Vec::set1(lo), vhi = Vec::set1(hi);
    for (int64_t r0 = 0; r0 < rows; r0 += L) {
        const int64_t nr = rows - r0 < L ? rows - r0 : L;
        for (int64_t j0 = 0; j0 < cols; j0 += L) {
            const int64_t nc = cols - j0 < L ? cols - j0 : L;
            V v[L];  // v[j] = column j of the block, then v[i] = row i
            for (int j = 0; j < L; ++j) v[j] = j < nc ? Vec::load(t + (j0 + j) * narrow_ldt + r0) : Vec::zero();
            Vec::transpose(v);
            for (int64_t i = 0; i < nr; ++i) {
                const int64_t r = r0 + i;
                float* cr = c + r * c_rs + j0;
                V x = v[i];
                if (bias) x = Vec::add(x, Vec::set1(bias[r]));
                if (add) x = Vec::add(x, nc == L ? Vec::load(add + r * c_rs + j0) : Vec::load_first(add + r * c_rs + j0, nc));
                if (clamp) x = Vec::min_fast(vhi, Vec::max_fast(vlo, x));
                if (nc == L) Vec::store(cr, x);
                else Vec::store_first(cr, nc, x);
            }
        }
    }
}

// One full MR-row panel of row-major A (MR <= L): dst[k * MR + i] = alpha * a[i * a_rs + k], L k values per
// row at a time through one L x L transpose. For MR < L each L-wide store spills L - MR lanes into the next
// k's slots, which the next store rewrites; the last one stores only MR.
template <class Vec, int MR>
void gemm_pack_panel(int64_t kc, const float* a, int64_t a_rs, float alpha, float* dst) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    static_assert(MR <= L, "a panel's rows fit one transpose");
    const V va = Vec::set1(alpha);
    int64_t k = 0;
    for (; k + L <= kc; k += L) {
        V r[L];
        for (int i = 0; i < L; ++i) r[i] = i < MR ? Vec::mul(va, Vec::load(a + i * a_rs + k)) : Vec::zero();
        Vec::transpose(r);  // lanes 0 .. MR - 1 of r[j] are A[0 .. MR - 1, k + j]
        float* d = dst + k * MR;
        for (int j = 0; j + 1 < L; ++j) Vec::store(d + j * MR, r[j]);
        if constexpr (MR == L) Vec::store(d + (L - 1) * MR, r[L - 1]);
        else Vec::store_first(d + (L - 1) * MR, MR, r[L - 1]);
    }
    for (; k < kc; ++k)
        for (int i = 0; i < MR; ++i) dst[k * MR + i] = alpha * a[i * a_rs + k];
}

}  // namespace
}  // namespace flexpipe
