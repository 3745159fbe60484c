// SPDX-License-Identifier: Apache-2.0
// Winograd F(6x6, 3x3) and F(2x2, 3x3) convolution kernels (float32, stride 1, dilation 1).
//
// Maths (Lavin & Gray; the matrices of NNPACK/ncnn, checked numerically): for an output tile of
// m x m pixels (m = 6 or 2) and its input patch d of a x a pixels (a = m + 2),
//     Y = Aᵀ [ sum_c (G g[oc, c] Gᵀ) ⊙ (Bᵀ d[c] B) ] A
// where ⊙ is the element-wise product of a x a matrices. Naming the a² frequencies ξ = row * a + col:
//     U[ξ][oc][c] = (G g Gᵀ)[ξ]      filter transform, offline (prepack, winograd_f32_f63_filter__ref)
//     V[ξ][t][c]  = (Bᵀ d B)[ξ]      input transform, per tile t   (winograd_f32_f63_input__<isa>)
//     Mw[ξ][t][oc] = sum_c V[ξ][t][c] U[ξ][oc][c]                   a² small GEMMs (winograd_f32_6x16__<isa>)
//     Y = Aᵀ Mw A                     output transform, + bias, clamp  (winograd_f32_f63_output__<isa>)
// The GEMMs cost 2 a² C M flops per tile instead of 2 * 9 m² C M (direct): 5.06x fewer for F(6,3),
// 2.25x for F(2,3); F(6,3)'s larger interpolation points cost accuracy (relative error ~1e-6..1e-5 per
// layer in float32 against ~1e-7 for direct), which is why the op keeps F(2,3) and im2col for small
// channel counts.
//
// Layouts (floats; all kernels read and write exactly these):
//   transformed filter U: [Mp / 16][a²][C][16], Mp = round_up(M, 16), zero for oc >= M. A panel of
//     16 output channels is contiguous per input channel: the GEMM's B operand, read with vector loads.
//     Panels are outermost, so the filter of output channels [16 p0, 16 p1) is one contiguous range
//     (floats [p0, p1) * a² * C * 16): a weight slice (FlexNN) is a byte range of the whole filter.
//   input transform V: [tile][a²][Cv], Cv = round_up(C, 8); the transform handles 8 channels at once
//     (SIMD lanes = channels, so interior and border tiles cost the same) and writes all 8 lanes.
//   GEMM output Mw: [tile][a²][16] for one panel of 16 output channels: the microkernel stores rows of
//     16 contiguous floats per tile; the output transform reads 8 channels (lanes) per frequency.
// A transform call covers 8 channels of one tile; the microkernel covers <= 6 tiles x 16 channels for one
// frequency. Threading, tile blocks and workspace are the runtime's (runtime/conv_winograd.h).
//
// Tolerance: transforms and GEMM use float arithmetic (FMA in SIMD variants); variants must match __ref
// within k * 2^-20 * sum |terms| of each output (the tests state k); the whole algorithm matches direct
// convolution within 2^-14 (F(6,3)) or 2^-18 (F(2,3)) of sum_k |x * w| per output.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {

constexpr int winograd_lanes = 8;  // channels per transform call (V and Mw channel blocks)
constexpr int winograd_nr = 16;    // output channels per filter panel
constexpr int winograd_mr = 6;     // tiles per microkernel call

// Filter transform (plan time, scalar, computed in double): w [M, C, 3, 3] -> u (layout above).
void winograd_f32_f63_filter__ref(const float* w, int64_t M, int64_t C, float* u);
void winograd_f32_f23_filter__ref(const float* w, int64_t M, int64_t C, float* u);

// Input transform of one tile for channels [0, nc) (nc <= 8) of the input: x points at channel 0's
// plane [h][w], channel planes are `plane` floats apart. The a x a patch starts at (iy, ix), which may
// lie partly (or wholly) outside the image: those pixels read as zero. Writes v[ξ * v_stride + l] for
// every ξ < a² and l < 8 (lanes l >= nc get zero). Never reads outside the nc channel planes.
using WinogradInputFn = void (*)(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride);

// Output transform of one tile for channels [0, nc) (nc <= 8): m[ξ * m_stride + l] is the GEMM result
// of channel l at frequency ξ. Writes the top-left rows x cols (<= m) pixels of the tile into
// y + l * plane + r * w + c, after adding bias[l] (bias may be null) and applying act.
using WinogradOutputFn = void (*)(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act);

// The element-wise stage for one frequency: d[i * d_stride + j] = sum_{c < k} a[i * a_stride + c] *
// b[c * 16 + j] for rows i < rows (1..6) and j < 16. a rows are V rows of consecutive tiles, b a U panel.
using WinogradGemmFn = void (*)(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                                int64_t d_stride, int rows);

// The lean kernels' run-time filter transform of one panel of 16 output channels: a is the narrow
// GEMM's packed panel [C * 9][16] (conv_narrow_filter: row c * 9 + kh * 3 + kw, lane = output
// channel), u receives the panel's part of U, [a²][C][16]. Float arithmetic (the offline transform
// uses double): variants match __ref within 2^-20 * sum |terms|.
using WinogradFilterPanelFn = void (*)(const float* a, int64_t C, float* u);

void winograd_f32_f63_input__ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride);
void winograd_f32_f63_output__ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_f23_input__ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride);
void winograd_f32_f23_output__ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_6x16__ref(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                            int64_t d_stride, int rows);
void winograd_f32_f63_filter_panel__ref(const float* a, int64_t C, float* u);
void winograd_f32_f23_filter_panel__ref(const float* a, int64_t C, float* u);

#if defined(__x86_64__) || defined(_M_X64)
void winograd_f32_f63_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride);
void winograd_f32_f63_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_f23_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride);
void winograd_f32_f23_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_6x16__avx2(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                             int64_t d_stride, int rows);
void winograd_f32_6x16__avx512(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                               int64_t d_stride, int rows);
void winograd_f32_f63_filter_panel__avx2(const float* a, int64_t C, float* u);
void winograd_f32_f23_filter_panel__avx2(const float* a, int64_t C, float* u);
void winograd_f32_f63_filter_panel__avx512(const float* a, int64_t C, float* u);
void winograd_f32_f23_filter_panel__avx512(const float* a, int64_t C, float* u);
#endif

#if defined(__aarch64__)
void winograd_f32_f63_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride);
void winograd_f32_f63_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_f23_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride);
void winograd_f32_f23_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act);
void winograd_f32_6x16__neon(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                             int64_t d_stride, int rows);
void winograd_f32_f63_filter_panel__neon(const float* a, int64_t C, float* u);
void winograd_f32_f23_filter_panel__neon(const float* a, int64_t C, float* u);
#endif

}  // namespace flexpipe
