// SPDX-License-Identifier: Apache-2.0
// The narrow GEMM driver (see gemm_narrow.h).
#include "runtime/gemm_narrow.h"

#include <algorithm>
#include <numeric>

#include "common/align.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

// Below this many multiply-adds per thread a parallel region costs more than it saves.
constexpr int64_t min_fmas_per_thread = 64 * 1024;

// Fewest columns per thread for splitting by columns: below it (MobileNetV2's 7x7 planes, 24-25
// columns per thread) the column groups of a part run short and a split by units was faster.
constexpr int64_t narrow_split_min_cols = 64;

size_t tile_bytes(int64_t cols) {
    return align_up(static_cast<size_t>(std::min(cols, narrow_max_cols) * narrow_ldt) * sizeof(float), 64);
}

// C rows [i0, i0 + n) x columns [j0, j0 + w) from the Cᵀ tile t (column j at t + (j - j0) * narrow_ldt),
// as runs of columns that are contiguous in C.
void store_tile(const GemmKernels& g, const NarrowProblem& p, const float* t, int64_t i0, int64_t n, int64_t j0,
                int64_t w) {
    const float* bias = p.row_bias ? p.row_bias + i0 : nullptr;
    float* c = p.c + i0 * p.c_rs;
    const float* add = p.add ? p.add + i0 * p.c_rs : nullptr;
    if (p.col_period == 0) {
        g.f32_narrow_store(n, w, t, bias, add ? add + j0 : nullptr, c + j0, p.c_rs, p.clamp, p.min, p.max);
        return;
    }
    for (int64_t j = j0; j < j0 + w;) {
        const int64_t v = p.col_first + j, x = v % p.col_period;
        if (x >= p.col_valid) {  // the row's padding columns
            j += p.col_period - x;
            continue;
        }
        const int64_t run = std::min(p.col_valid - x, j0 + w - j), col = v / p.col_period * p.col_valid + x;
        g.f32_narrow_store(n, run, t + (j - j0) * narrow_ldt, bias, add ? add + col : nullptr, c + col, p.c_rs,
                           p.clamp, p.min, p.max);
        j += run;
    }
}

// One unit: rows [16 q0, 16 q0 + 16 panels) (clipped to p.rows), columns [jb, je).
void run_unit(const GemmKernels& g, const NarrowProblem& p, int64_t q0, int64_t panels, int64_t jb, int64_t je,
              float* t) {
    const int64_t a_next = p.k * narrow_panel_rows;
    const float* a = p.a + q0 * a_next;
    const int64_t i0 = q0 * narrow_panel_rows, n = std::min(p.rows - i0, panels * narrow_panel_rows);
    for (int64_t j0 = jb; j0 < je; j0 += narrow_max_cols) {
        const int64_t w = std::min(narrow_max_cols, je - j0);
        const int64_t groups = (w + g.narrow_cols - 1) / g.narrow_cols;
        if (p.k == 0) std::fill(t, t + w * narrow_ldt, 0.0f);
        for (int64_t pc = 0; pc < p.k; pc += narrow_kc) {
            const int64_t kc = std::min(narrow_kc, p.k - pc);
            for (int64_t gi = 0, j = 0; gi < groups; ++gi) {  // balanced groups: sizes differ by at most one
                const int64_t cols = w * (gi + 1) / groups - w * gi / groups;
                g.f32_narrow(panels, cols, kc, a + pc * narrow_panel_rows, a_next, p.b + j0 + j, p.b_off + pc,
                             t + j * narrow_ldt, pc > 0);
                j += cols;
            }
        }
        store_tile(g, p, t, i0, n, j0, w);
    }
}

}  // namespace

size_t gemm_narrow_workspace_bytes(int64_t cols, int threads) {
    return 64 + static_cast<size_t>(std::max(threads, 1)) * tile_bytes(cols);
}

Status gemm_narrow_run(const GemmKernels& g, const NarrowProblem& p, void* ws, size_t ws_bytes, int threads) {
    FLEXPIPE_CHECK_ARG(g.f32_narrow && g.f32_narrow_store && g.narrow_panels >= 1 && g.narrow_panels <= 2 && g.narrow_cols >= 1,
                       "failed to run the narrow gemm: no kernels in the table");
    FLEXPIPE_CHECK_ARG(p.k >= 0 && p.rows >= 0 && p.cols >= 0 && p.col_period >= 0 && p.col_first >= 0 &&
                           (p.col_period == 0 ? p.c_rs >= p.cols : p.col_valid >= 1 && p.col_valid <= p.col_period),
                       "failed to run the narrow gemm: bad sizes (k=%lld, rows=%lld, cols=%lld, c_rs=%lld)",
                       static_cast<long long>(p.k), static_cast<long long>(p.rows), static_cast<long long>(p.cols),
                       static_cast<long long>(p.c_rs));
    if (p.rows == 0 || p.cols == 0) return Status::ok();
    FLEXPIPE_CHECK_ARG(p.a && p.c && ((p.b && p.b_off) || p.k == 0), "failed to run the narrow gemm: missing operand");
    const int64_t panels = (p.rows + narrow_panel_rows - 1) / narrow_panel_rows;
    const int64_t units = (panels + g.narrow_panels - 1) / g.narrow_panels;
    const int64_t fmas = p.rows * p.cols * std::max<int64_t>(1, p.k);
    const int64_t want = std::max<int64_t>(1, std::min<int64_t>(threads, fmas / min_fmas_per_thread));
    // Work items, two ways:
    // - By columns, when B holds at least as many floats as A and every thread still gets
    //   narrow_split_min_cols columns: thread s takes every unit over its own share of the columns.
    //   Each thread then reads all of A (the smaller operand) and only its part of B, which the op
    //   before wrote half on each core: a projection after a depthwise convolution (MobileNetV2's 1x1
    //   384->64 at 14x14: A 98 KB, B 301 KB) reads 150 KB of B per thread instead of all 301 KB,
    //   half of it from the other core's cache. B's floats are the caller's (p.b_floats): a 3x3
    //   convolution's phase planes hold each input pixel once for all nine taps, so ResNet's 3x3
    //   128->128 at 28x28 (A 590 KB, B 66 KB) splits by units; compared as k x cols it split by
    //   columns and each thread read the whole streamed weight.
    // - Otherwise units, each cut into column parts when the units do not divide among the threads
    //   (lcm(units, want) items), so that one 16-channel layer or three units on two threads still
    //   split evenly. A part re-reads its unit's panels; with units a multiple of want nothing is cut.
    // Both alternated in one process, 2 threads (an ad hoc A/B, medians of 80 runs): MobileNetV2 0.969x,
    // SqueezeNet 0.983x of the time with units only.
    const int64_t b_floats = p.b_floats > 0 ? p.b_floats : p.k * p.cols;
    const bool by_columns = want > 1 && b_floats >= p.rows * p.k && p.cols / want >= narrow_split_min_cols;
    const int64_t parts =
        by_columns ? want : std::min(want / std::gcd(units, want), std::max<int64_t>(1, p.cols / g.narrow_cols));
    const int64_t items = units * parts;
    int t = static_cast<int>(std::min(want, items));
    while (t > 1 && gemm_narrow_workspace_bytes(p.cols, t) > ws_bytes) --t;
    if (!ws || gemm_narrow_workspace_bytes(p.cols, t) > ws_bytes) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run the narrow gemm: workspace of %zu bytes is too small (need %zu for 1 thread)",
                             ws_bytes, gemm_narrow_workspace_bytes(p.cols, 1));
    }
    char* base = reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(ws), 64));
    const size_t per_thread = tile_bytes(p.cols);
    parallel_items(t, t, [&](int64_t c, int slot) {
        float* tile = reinterpret_cast<float*>(base + static_cast<size_t>(slot) * per_thread);
        for (int64_t i = items * c / t; i < items * (c + 1) / t; ++i) {
            const int64_t unit = by_columns ? i % units : i / parts, part = by_columns ? i / units : i % parts;
            const int64_t q0 = unit * g.narrow_panels;
            run_unit(g, p, q0, std::min<int64_t>(g.narrow_panels, panels - q0), p.cols * part / parts,
                     p.cols * (part + 1) / parts, tile);
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
