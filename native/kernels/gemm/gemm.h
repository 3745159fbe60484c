// SPDX-License-Identifier: Apache-2.0
// General matrix multiply kernels (float32): the strided reference GEMM (first part) and the
// packed-panel micro-kernels and packers of the fast path (second part).
//
// Strided reference GEMM (arbitrary element strides for A and B). Computes rows [m_begin, m_end) of
//     c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0)
//                      + alpha * sum_k a[i * a_rs + k * a_cs] * b[k * b_rs + j * b_cs]
// for 0 <= j < n. Strides express transposes (A^T: swap a_rs and a_cs), so one kernel serves Gemm
// (transA/transB) and batched MatMul. c rows are dense with leading dimension ldc; row ranges are
// disjoint, so callers split rows over threads.
// Loop order: when B rows are contiguous (b_cs == 1) the kernel runs i-k-j over blocks of 4 rows of C
// and 256 columns, so each B row segment is reused 4 times from L1 and the j loop vectorizes; when
// B is transposed (b_rs == 1) and A rows are contiguous it uses dot products over contiguous k.
// Tolerance: variants must match __ref within k * 2^-20 * sum_k |a * b| (float accumulation).
#pragma once

#include <cstdint>
#include <type_traits>

namespace flexpipe {

struct GemmArgs {
    int64_t n = 0;  // columns of C
    int64_t k = 0;  // reduction length
    float alpha = 1.0f;
    const float* a = nullptr;
    int64_t a_rs = 0, a_cs = 1;
    const float* b = nullptr;
    int64_t b_rs = 0, b_cs = 1;
    float* c = nullptr;
    int64_t ldc = 0;
    bool accumulate = false;
};

using GemmFn = void (*)(const GemmArgs& g, int64_t m_begin, int64_t m_end);
void gemm_f32__ref(const GemmArgs& g, int64_t m_begin, int64_t m_end);

// ---------------------------------------------------------------------------------------------
// Packed-panel GEMM micro-kernels (the fast path; driven by runtime/gemm_driver.h).
//
// Layouts (MR x NR is the micro-tile of the ISA: 4x8 ref, 6x16 avx2, 8x16 avx512, 8x12 neon; NR is the
// width of a B panel, and the avx512 tile may span two panels, 8x32, see below):
//   packed A panel  [kc][MR]      a[p * MR + i] = alpha * A[i0 + i, p0 + p]; rows i >= mr are zero
//   packed B panel  [kc][NR]      b[p * NR + j] = B[p0 + p, j0 + j]; columns past N are zero
//   (a whole packed B is [ceil(N / NR)][K][NR]: panel q holds columns q*NR .. q*NR+NR-1, so the
//    k-block [p0, p0 + kc) of panel q starts at q*K*NR + p0*NR and is contiguous)
// A micro-kernel computes, for i < mr <= MR and j < nr <= NR,
//   acc[i][j] = sum_{p < kc} A(i, p) * B(p, j)
//   c[i * ldc + j] = clamp((load_c ? c[i * ldc + j] : add ? add[i * ldc + j] : 0) + acc[i][j]
//                          + (bias ? bias[j] : 0) + (row_bias ? row_bias[i] : 0))
// where clamp(x) = min(max(x, min), max) only when `clamp` is set, NaN propagating. Rows i >= mr and
// columns j >= nr of c are neither read nor written. No pointer needs alignment (the driver's
// workspace and the arena give 64 bytes, which is faster). kc may be 0 (then only the epilogue runs).
// Operands are packed panels by default: A(i, p) = a[p * MR + i], B(p, j) = b[p * NR + j], both read
// whole (MR and NR wide). Operands read in place (no packing) say so with strides in the params:
//   a_ks != 0:  A(i, p) = a[i * a_rs + p * a_ks], only rows i < mr are read (e.g. conv weights [M, K])
//   b_ks != 0:  B(p, j) = b[p * b_ks + j], all NR columns are read (e.g. NCHW activations, full panels)
// A kernel whose table says tile_panels = 2 (runtime/dispatch_gemm.h) also takes NR < nr <= 2 NR:
// columns j >= NR are column j - NR of a second panel at b + b_next, read as the first (packed:
// b[b_next + p * NR + j - NR]; in place: b[b_next + p * b_ks + j - NR]).
// Tolerance: every variant matches __ref within K * 2^-20 * sum_p |a_ip * b_pj| (+ |bias_j|) per
// element: the same products summed in another order in float32 (FMA or not).
struct GemmTileParams {
    const float* bias = nullptr;      // bias[j] for the tile's columns, or null
    const float* row_bias = nullptr;  // row_bias[i] for the tile's rows (a conv's per-channel bias), or null
    int64_t a_rs = 0, a_ks = 0;       // a_ks != 0: A read in place (see above); 0: packed panel
    int64_t b_ks = 0;                 // b_ks != 0: B read in place (see above); 0: packed panel
    int64_t b_next = 0;               // nr > NR: offset of the second B panel from b, in floats
    // Without load_c: a matrix added in C's place, laid out as C (a residual connection, C = act(A B +
    // bias + R), summed in the epilogue of the first k-block instead of by a separate Add), or null.
    const float* add = nullptr;
    float min = 0.0f, max = 0.0f;  // clamp bounds, used only when clamp is true
    bool load_c = false;
    bool clamp = false;
};

using GemmUkernelFn = void (*)(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                               int64_t ldc, const GemmTileParams& p);
void gemm_f32_4x8__ref(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                       int64_t ldc, const GemmTileParams& p);
void gemm_f32_6x16__avx2(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                         int64_t ldc, const GemmTileParams& p);
void gemm_f32_8x12__neon(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                         int64_t ldc, const GemmTileParams& p);
void gemm_f32_8x32__avx512(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                           int64_t ldc, const GemmTileParams& p);

// Row dots for a narrow right edge of C (at most gemm_dot_max_cols columns): for i < rows, t < cols,
//   acc = sum_{p < k} a[i * a_rs + p] * bt[t * k + p]
//   c[i * ldc + t] = clamp((load_c ? c : add ? add[i * ldc + t] : 0) + acc + (bias ? bias[t] : 0)
//                          + (row_bias ? row_bias[i] : 0))
// bt holds the edge's columns of B transposed (each column contiguous). A tile of the 6x16 kernel
// computes a 1-column edge as 8 lanes and 6 broadcasts per k step; a dot product reads each of A's
// rows once, 8 (avx2) or 4 (neon) products per instruction. Tolerance as the micro-kernels.
constexpr int64_t gemm_dot_max_cols = 4;
// The epilogue of one row dot: c[i * ldc + t] from its sum `acc` (shared by the variants).
static inline void gemm_dot_store(float acc, int64_t i, int64_t t, float* c, int64_t ldc, const GemmTileParams& p) {
    float* cp = c + i * ldc + t;
    const float init = p.load_c ? *cp : (p.add ? p.add[i * ldc + t] : 0.0f);
    float v = init + acc + (p.bias ? p.bias[t] : 0.0f) + (p.row_bias ? p.row_bias[i] : 0.0f);
    if (p.clamp) v = v < p.min ? p.min : (v > p.max ? p.max : v);  // NaN passes through
    *cp = v;
}
// Calls body(std::integral_constant<int, C>{}) with C = cols (1 .. gemm_dot_max_cols).
template <typename Body>
inline void gemm_dot_cols(int64_t cols, Body&& body) {
    switch (cols) {
        case 1: body(std::integral_constant<int, 1>{}); break;
        case 2: body(std::integral_constant<int, 2>{}); break;
        case 3: body(std::integral_constant<int, 3>{}); break;
        default: body(std::integral_constant<int, 4>{}); break;
    }
}
using GemmDotFn = void (*)(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                           float* c, int64_t ldc, const GemmTileParams& p);
void gemm_f32_dot__ref(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                       float* c, int64_t ldc, const GemmTileParams& p);
void gemm_f32_dot__avx2(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p);
void gemm_f32_dot__neon(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p);

// Packs rows [0, rows) x k-range [0, kc) of A (A[i, p] = a[i * a_rs + p * a_cs]) into ceil(rows / mr)
// panels [kc][mr], each scaled by alpha, rows past `rows` zero; panel r starts at dst + r * mr * kc.
using GemmPackAFn = void (*)(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs,
                             int64_t a_cs, float alpha, float* dst);
void gemm_pack_a_f32__ref(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                          float alpha, float* dst);
void gemm_pack_a_f32__avx2(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                           float alpha, float* dst);
void gemm_pack_a_f32__avx512(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                             float alpha, float* dst);

// Packs columns [0, cols) x rows [0, k) of B (B[p, j] = b[p * b_rs + j * b_cs]) into ceil(cols / nr)
// panels [k][nr], columns past `cols` zero; panel q starts at dst + q * k * nr.
void gemm_pack_b_f32__ref(int64_t nr, int64_t k, int64_t cols, const float* b, int64_t b_rs, int64_t b_cs,
                          float* dst);

}  // namespace flexpipe
