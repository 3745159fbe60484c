// SPDX-License-Identifier: Apache-2.0
// The narrow GEMM driver (float32): C = act(A · B + row_bias + R) for a B of few columns, A in the
// 16-row panels of kernels/gemm/narrow.h. The conv algorithm `narrow` (runtime/conv_narrow.h) runs
// on it: a convolution over a small plane, its prepacked weight as A and its input (1x1) or its
// im2col columns as B.
//
//     C[i, j] = act(sum_{p < k} A(i, p) * B(p, j) + row_bias[i] + R[i, j])     i < rows, j < cols
//     A(i, p) = a[(i / 16) * k * 16 + p * 16 + i % 16]    (ceil(rows / 16) panels, rows past `rows` unread in C)
//     B(p, j) = b[b_off[p] + j];  C[i, j] = c[i * c_rs + col(j)];  R[i, j] = add[i * c_rs + col(j)] (optional)
//     act(x) = clamp ? min(max(x, min), max) : x (NaN passes)
//
// Columns may be virtual (col_period > 0): column j stands for v = col_first + j, a position in rows
// of col_period columns of which the first col_valid exist in C: col(j) = (v / col_period) *
// col_valid + v % col_period, and columns with v % col_period >= col_valid are computed but not
// stored. This is how a convolution over padded phase planes (conv_narrow.h) reads every kernel tap
// as one offset into B: its plane rows are wider than the output's. Otherwise col(j) = j.
//
// A weight slice (FlexNN) is a range of whole panels and the matching rows of C, row_bias and R:
// pass them as the problem. Threads take units of the table's narrow_panels panels (cut into column
// parts when there are fewer units than threads, or a count they do not divide), or, when B holds at
// least as many floats as A, every unit over their own share of the columns; each unit
// runs k in blocks of narrow_kc, every column group of a block before the next, so each weight
// element is read from memory once and then from L1 by the other column groups. The Cᵀ tile of a
// unit (at most narrow_max_cols columns at a time) lives in the thread's part of the workspace.
// No allocation happens.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "runtime/dispatch.h"

namespace flexpipe {

constexpr int64_t narrow_kc = 256;        // k per block: a 32 KiB A block of two panels, within L1
constexpr int64_t narrow_max_cols = 256;  // columns per Cᵀ tile: 32 KiB per thread

struct NarrowProblem {
    int64_t k = 0;
    int64_t rows = 0, cols = 0;
    const float* a = nullptr;  // panels
    const float* b = nullptr;
    const int64_t* b_off = nullptr;  // k row offsets
    int64_t b_floats = 0;            // floats of B the offsets reach (0: k x cols); decides the thread split
    int64_t col_period = 0, col_valid = 0, col_first = 0;
    float* c = nullptr;
    int64_t c_rs = 0;
    const float* row_bias = nullptr;
    const float* add = nullptr;
    bool clamp = false;
    float min = 0.0f, max = 0.0f;
};

// Workspace of gemm_narrow_run for `cols` columns on `threads` threads (64 bytes of alignment slack
// and one Cᵀ tile per thread).
size_t gemm_narrow_workspace_bytes(int64_t cols, int threads);

Status gemm_narrow_run(const GemmKernels& g, const NarrowProblem& p, void* ws, size_t ws_bytes, int threads);

}  // namespace flexpipe
