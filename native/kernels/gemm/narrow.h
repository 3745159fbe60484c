// SPDX-License-Identifier: Apache-2.0
// Narrow GEMM micro-kernels (float32): C = A · B for a B of few columns, vectorized along A's rows.
// A convolution over a small plane (ResNet's 7x7 stage: 49 output pixels against 512-2048 output
// channels and 512-4608 reductions) computed as rows = channels and vectors along pixels pays for a
// partial vector at every row (49 pixels are 3 vectors of 16 and one lone column) and reads its
// weights, each used only 49 times, as 8-16 strided row streams. Here a vector holds 16 output
// channels instead: every pixel is a broadcast, no lane is wasted whatever the pixel count, and the
// weight is one contiguous stream per 16 channels.
//
// A comes in 16-row panels [K][16] (a convolution's weight prepacked by conv_narrow_filter,
// runtime/ops/conv_prepack.cc): A(16 q + i, p) = a[q * K * 16 + p * 16 + i], rows past M zero.
// One call computes `panels` (1 .. the table's narrow_panels) consecutive panels, the second at
// a + a_next, by `cols` (1 .. the table's narrow_cols) columns of B, whose rows are found through a
// table of offsets (B(p, j) = b[b_off[p] + j]): a row-major matrix (b_off[p] = p * rows' stride), a
// convolution's input read in place, or its padded phase planes with one offset per (channel, kernel
// tap), the implicit im2col of runtime/conv_narrow.h:
//
//     t[j * narrow_ldt + 16 v + i] = (accumulate ? t[j * narrow_ldt + 16 v + i] : 0)
//                                    + sum_{p < kc} a[v * a_next + p * 16 + i] * b[b_off[p] + j]
//
// for j < cols, v < panels, i < 16: a tile of Cᵀ, which the driver (runtime/gemm_narrow.h) adds its
// epilogue to and writes into C. Every element is summed over p in order, one FMA (or multiply
// and add, ref) per step, so the variants agree within the GEMM tolerance of gemm.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace flexpipe {

constexpr int64_t narrow_panel_rows = 16;  // rows of A per panel (lanes of the AVX-512 vector)
constexpr int64_t narrow_ldt = 32;         // floats per column of the Cᵀ tile (at most 2 panels)

using GemmNarrowFn = void (*)(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                              const float* b, const int64_t* b_off, float* t, bool accumulate);
void gemm_f32_narrow__ref(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                          const float* b, const int64_t* b_off, float* t, bool accumulate);
void gemm_f32_narrow__avx2(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate);
void gemm_f32_narrow__avx512(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                             const float* b, const int64_t* b_off, float* t, bool accumulate);
void gemm_f32_narrow__neon(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate);

// The epilogue: C rows [0, rows) (rows <= narrow_ldt) by columns [0, cols) from a Cᵀ tile,
//
//     c[r * c_rs + j] = act(t[j * narrow_ldt + r] + (bias ? bias[r] : 0) + (add ? add[r * c_rs + j] : 0))
//     act(x) = clamp ? min(max(x, lo), hi) : x   (NaN passes)
//
// a transpose: the SIMD variants turn 16x16 (AVX-512), 8x8 (AVX2) or 4x4 (NEON) blocks of the tile
// with register shuffles so that C is written in row vectors. The sums are the same in every variant.
using GemmNarrowStoreFn = void (*)(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                   float* c, int64_t c_rs, bool clamp, float lo, float hi);
void gemm_f32_narrow_store__ref(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                float* c, int64_t c_rs, bool clamp, float lo, float hi);
void gemm_f32_narrow_store__avx2(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi);
void gemm_f32_narrow_store__avx512(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                   float* c, int64_t c_rs, bool clamp, float lo, float hi);
void gemm_f32_narrow_store__neon(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi);

// Calls body(std::integral_constant<int, P>{}) with P = cols (1 .. MaxCols): the micro-kernels'
// dispatch from a run-time column count to their column-templated tiles.
template <int MaxCols, typename Body, size_t... Ps>
inline void narrow_cols_impl(int64_t cols, Body&& body, std::index_sequence<Ps...>) {
    (void)((cols == static_cast<int64_t>(Ps) + 1 ? (body(std::integral_constant<int, static_cast<int>(Ps) + 1>{}), true)
                                                 : false) ||
           ...);
}
template <int MaxCols, typename Body>
inline void narrow_cols(int64_t cols, Body&& body) {
    narrow_cols_impl<MaxCols>(cols, body, std::make_index_sequence<MaxCols>{});
}

// The entry of a variant whose tile holds one panel (AVX2, NEON): for each of the `panels` panels v,
// tile(std::integral_constant<int, cols>{}, v) computes the Cᵀ rows [16 v, 16 v + 16).
template <int MaxCols, typename Tile>
inline void narrow_each_panel(int64_t panels, int64_t cols, Tile&& tile) {
    for (int64_t v = 0; v < panels; ++v) narrow_cols<MaxCols>(cols, [&](auto p) { tile(p, v); });
}

// Packs a row-major A [m, k] (rows a_rs floats apart) into ceil(m / 16) panels [k][16] at dst,
// rows past m zero (the layout above).
void gemm_pack_narrow_a(int64_t m, int64_t k, const float* a, int64_t a_rs, float* dst);

}  // namespace flexpipe
