// SPDX-License-Identifier: Apache-2.0
// The packed-panel GEMM driver (float32): cache blocking, A packing, B packing, thread split, weight
// and input slices. MatMul/Gemm use it, and so can any op that reduces to a matrix product
// (im2col + GEMM and 1x1 convolutions, attention).
//
// What gemm_run computes, for rows i in [m0, m1) and columns j in [n0, n1) of C only:
//
//     C[i, j] = act(alpha * sum_{p < k} A[i, p] * B[p, j] + beta * C[i, j] + bias[j] + R[i, j])
//
//     A[i, p] = a[(i - a_row0) * a_rs + p * a_cs]   any strides (row-major: a_cs = 1; Aᵀ: a_rs = 1)
//     C[i, j] = c[i * c_rs + j * c_cs]              c is C[0, 0]; c_cs == 1 is the fast path
//     bias[j]                                        optional, indexed by the absolute column j
//     R[i, j] = add[i * c_rs + j * c_cs]             optional (beta must be 0): a residual added in the
//                                                    epilogue (a Conv fused with the Add after it)
//     act(x) = clamp ? min(max(x, min), max) : x     fused ReLU (min 0, max +inf) / ReLU6 / Clip; NaN passes
//     beta == 0: C is not read (may hold garbage);   beta == 1: accumulate into C
//
// B comes in one of two forms:
//   * packed (GemmPackedB, the fast path for constant weights): made once, offline or at plan time,
//     by gemm_pack_b (prepack transform "gemm_pack_b", runtime/ops/gemm_prepack.cc). It holds the
//     weight columns [n_begin, n_end) as ceil((n_end - n_begin) / nr) panels [k][nr], zero-padded:
//         data[q * k * nr + p * nr + t] = B[p, n_begin + q * nr + t]
//     nr is the kernel table's (GemmKernels::nr: 16 avx2, 12 neon, 8 ref) and must match.
//   * raw: B[p, j] = b[p * b_rs + j * b_cs] (absolute column j; Bᵀ: b_rs = 1). gemm_run packs the
//     columns [n0, n1) into the workspace first (activations such as attention's Q·Kᵀ).
//
// In place (no packing): with a_in_place the micro-kernel reads A's rows where they are (alpha must
// be 1, and rows contiguous along k must not be a multiple of 4 KiB apart, see a_rows_alias), e.g. a
// convolution's [M, K] weights, which would otherwise be copied into a panel on every run; with b_in_place (raw B with b_cs == 1 and c_cs == 1) it reads whole nr-column groups of B's
// rows where they are, e.g. the NCHW input of a 1x1 convolution, and only a last partial group is
// packed (into the workspace's packed-B region). Results equal the packed path's within the GEMM
// tolerance (same products, same k order).
// row_bias[i] (absolute row i, optional) is added to row i in the epilogue, as bias[j] is to column j.
//
// Slices (FlexNN): a weight slice is a GemmPackedB holding only columns [n_begin, n_end) of the
// weight (gemm_pack_b with n0/n1); running each slice with [n0, n1) = [n_begin, n_end) writes its
// columns of the one output and leaves the others untouched. An input slice is a range [m0, m1) of
// A's rows, e.g. the im2col rows of a band of output pixels: pass a = that slice's buffer and
// a_row0 = m0. Rows and columns of C outside the ranges are never read or written. Any n0 works,
// panel-aligned ones (n0 - n_begin a multiple of nr) avoid a copy through a tile buffer.
//
// Threads: gemm_run splits the output rectangle into `threads` sub-rectangles of whole micro-tiles
// (rows in units of mr, columns in units of nr; split along N when M is small, as in BERT's
// M = 128 layers, else along M), one per thread via runtime/parallel.h, so 1 and 2 threads are
// balanced to within one micro-tile. Each thread then runs the blocked loops (nc, kc, mc, nr, mr)
// over its sub-rectangle with its own packed A block. Calling gemm_run with threads = 1 from
// inside your own parallel_for is fine (it does not nest a parallel region).
//
// Workspace: size it with gemm_workspace_bytes(kernels, problem, threads) for the most threads you
// will pass (ops size for maxKernelThreads = 8 at plan time); gemm_run uses the most threads
// (<= `threads`) whose need fits in ws_bytes, and fails only if one thread does not fit. The
// workspace holds the packed raw B (k x roundup(n1 - n0, nr) floats) and, per thread, a packed A
// block (<= mc x kc floats; none when A is read in place) and one mr x nr tile; B read in place
// needs only its last partial column group (<= k x nr floats). It needs no alignment. No allocation
// happens.
//
// Numerics: fp32 products, fp32 accumulation in k-blocks of <= kc (FMA on avx2/neon); every ISA is
// within K * 2^-20 * sum_p |A[i, p] * B[p, j]| (+ |bias|) of the exact value (test/kernels/gemm.test.ts).
//
// Example, a Linear layer Y[M, N] = X[M, K] · Wᵀ + b with W [N, K] constant (torch Gemm, transB = 1):
//     plan time:  gemm_pack_b(kernels(), w, /*b_rs=*/1, /*b_cs=*/K, K, 0, N, packed)
//     run time:   GemmProblem p;  p.k = K;  p.a = x;  p.a_rs = K;
//                 p.b_packed = {packed, K, 0, N, kernels().gemm.nr};
//                 p.c = y;  p.c_rs = N;  p.m1 = M;  p.n1 = N;  p.bias = b;
//                 gemm_run(kernels().gemm, p, ws, ws_bytes, threads);
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "runtime/dispatch.h"

namespace flexpipe {

struct GemmPackedB {
    const float* data = nullptr;
    int64_t k = 0;
    int64_t n_begin = 0, n_end = 0;  // weight columns held
    int32_t nr = 0;
};

struct GemmProblem {
    int64_t k = 0;
    const float* a = nullptr;
    int64_t a_rs = 0, a_cs = 1, a_row0 = 0;
    GemmPackedB b_packed;             // used when b_packed.data is set, else the raw b below
    const float* b = nullptr;
    int64_t b_rs = 0, b_cs = 1;
    float* c = nullptr;
    int64_t c_rs = 0, c_cs = 1;
    int64_t m0 = 0, m1 = 0;           // rows of C computed (input slice)
    int64_t n0 = 0, n1 = 0;           // columns of C computed (weight slice)
    float alpha = 1.0f, beta = 0.0f;
    const float* bias = nullptr;
    const float* row_bias = nullptr;  // indexed by the absolute row i
    const float* add = nullptr;       // R, laid out as C (needs beta == 0)
    bool a_in_place = false;          // read A without packing (needs alpha == 1)
    bool b_in_place = false;          // read raw B without packing (needs b_cs == 1, c_cs == 1)
    bool clamp = false;
    float min = 0.0f, max = 0.0f;
};

// Floats of a packed B holding `cols` columns with k rows: ceil(cols / nr) * k * nr.
int64_t gemm_packed_b_floats(int64_t k, int64_t cols, int32_t nr);

// Packs columns [n0, n1) of B (B[p, j] = b[p * b_rs + j * b_cs], rows p < k) into dst, which has
// gemm_packed_b_floats(k, n1 - n0, g.nr) floats; the result is GemmPackedB{dst, k, n0, n1, g.nr}.
void gemm_pack_b(const GemmKernels& g, const float* b, int64_t b_rs, int64_t b_cs, int64_t k, int64_t n0,
                 int64_t n1, float* dst);

// Workspace bytes gemm_run needs for p with `threads` threads (p's pointers are not read).
size_t gemm_workspace_bytes(const GemmKernels& g, const GemmProblem& p, int threads);

// The threads gemm_run will use: the most <= threads whose workspace fits ws_bytes (0: none fits).
int gemm_threads_fitting(const GemmKernels& g, const GemmProblem& p, size_t ws_bytes, int threads);

// Runs p (see the top of this file). Errors: invalid ranges or strides, a packed B whose k/nr/columns
// do not cover the problem, or a workspace too small for one thread.
Status gemm_run(const GemmKernels& g, const GemmProblem& p, void* ws, size_t ws_bytes, int threads);

}  // namespace flexpipe
