// SPDX-License-Identifier: Apache-2.0
// The packed-panel GEMM driver: thread split, BLIS-style blocked loops, A packing, edge tiles.
#include "runtime/gemm_driver.h"

#include <algorithm>
#include <cstring>

#include "common/align.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// k-blocks at most this short sweep C row block by row block (see run_rect).
constexpr int64_t short_k = 64;

// Below this many multiply-adds per thread a parallel region costs more than it saves.
constexpr int64_t min_fmas_per_thread = 64 * 1024;

// Everything the loops need, derived once per gemm_run.
struct Plan {
    const GemmKernels* g;
    const GemmProblem* p;
    GemmPackedB b;          // packed operand (the caller's, or the workspace copy of raw B)
    bool a_in_place;        // micro-kernels read A's rows where they are
    bool b_in_place;        // ... and B's full nr-column groups; b.data then holds only the last,
                            // partial group (panel q_edge), packed
    int64_t q_edge;         // b_in_place: index of the packed partial panel (q1 when there is none)
    int64_t dot_cols;       // b_in_place: a last partial group this narrow is done by row dots (0: none)
    int64_t kc, kblocks;    // balanced k-blocks: kblocks * kc >= k, kc <= g.kc
    int64_t q0, q1;         // panels of b covering [n0, n1)
    int tm, tn;             // rectangle grid: tm row groups x tn column groups
};

int64_t kblocks_of(const GemmKernels& g, int64_t k) { return std::max<int64_t>(1, ceil_div(k, g.kc)); }
int64_t kc_of(const GemmKernels& g, int64_t k) { return ceil_div(k, kblocks_of(g, k)); }
int64_t mc_of(const GemmKernels& g, int64_t rows) { return std::min<int64_t>(round_up(rows, g.mr), g.mc); }

// A's rows contiguous along k and a multiple of this many floats (4 KiB) apart map to the same L1
// set: the mr rows a micro-kernel reads in step then evict each other at every k (16 rows against
// 8-12 ways), so such A is packed even when asked to be read in place. ResNet's 1x1 convolutions
// over 1024 and 2048 channels, 1 thread (conv.bench.js, two alternated rounds, AVX-512): 1024->256
// at 14x14 0.88 -> 0.55 ms, 2048->512 at 7x7 0.94 -> 0.74 ms; 2 KiB strides (512 channels) gained
// nothing, so they stay in place.
constexpr int64_t a_alias_floats = 1024;
bool a_rows_alias(const GemmProblem& p) { return p.a_cs == 1 && p.a_rs % a_alias_floats == 0; }

// Whether gemm_run reads A / B in place for p (the requests it honours; see gemm_driver.h).
bool reads_a_in_place(const GemmProblem& p) { return p.a_in_place && p.alpha == 1.0f && !a_rows_alias(p); }
bool reads_b_in_place(const GemmProblem& p) { return p.b_in_place && !p.b_packed.data && p.b_cs == 1 && p.c_cs == 1; }

// The shared B region: a whole packed copy of raw B, or (B in place) only its last partial column
// group, packed or transposed for row dots (at most k x nr floats either way).
size_t b_bytes(const GemmKernels& g, const GemmProblem& p) {
    if (p.b_packed.data) return 0;
    const int64_t cols = reads_b_in_place(p) ? std::min<int64_t>(p.n1 - p.n0, g.nr) : p.n1 - p.n0;
    return align_up(static_cast<size_t>(gemm_packed_b_floats(p.k, cols, g.nr)) * sizeof(float), 64);
}

// Whether run_rect copies each k-block of an in-place B panel into a contiguous per-thread buffer
// before its row sweep, so that the row groups reusing it read it as from a packed B. In place, a
// panel's k-block is kc rows of 64-128 bytes, each a whole plane apart: with unaligned planes (7x7,
// 13x13, 14x14 pixels) its rows straddle two lines in 3 of 4 rows; with aligned ones (28x28, 56x56)
// every row sits on its own page (56x56: 12.5 KiB apart), so each row group's sweep walks kc pages
// again and maps its lines to a quarter of L1's sets. The copy first made only unaligned planes copy
// (8-18% on Zen 4, where aligned ones lost 5-15%); on the Xeon (AVX-512, 48 KiB L1) CI and the
// benchmarks run on, aligned planes gain as well: conv.bench.js, 300 runs, one build then the other,
// 1x1 512->128 at 28x28 0.874 -> 0.720 ms at 1 thread and 0.447 -> 0.400 at 2, 256->64 at 56x56
// 0.953 -> 0.907 and 0.491 -> 0.426. With fewer than 4 row groups the copy is not repaid. Short
// products sweep C by rows instead (see run_rect) and read B in place.
constexpr int64_t copy_min_row_groups = 4;
bool copies_b_panels(const GemmKernels& g, const GemmProblem& p) {
    return reads_b_in_place(p) && p.k > short_k && ceil_div(p.m1 - p.m0, g.mr) >= copy_min_row_groups;
}

// Per thread: a packed A block (none when A is read in place), a copy of the B panels one tile spans
// (copies_b_panels) and one mr x nr edge tile.
size_t thread_bytes(const GemmKernels& g, const GemmProblem& p) {
    const int64_t a_floats = reads_a_in_place(p) ? 0 : std::max<int64_t>(1, mc_of(g, p.m1 - p.m0) * kc_of(g, p.k));
    const int64_t b_floats = copies_b_panels(g, p) ? kc_of(g, p.k) * g.nr * g.tile_panels : 0;
    return align_up(static_cast<size_t>(a_floats) * sizeof(float), 64) +
           align_up(static_cast<size_t>(b_floats) * sizeof(float), 64) +
           align_up(static_cast<size_t>(g.mr) * g.nr * sizeof(float), 64);
}

// Grid tm x tn = threads (one rectangle per thread) minimising the cost of the largest sub-rectangle, per k step in
// FMA-equivalents: its multiply-adds (rows x cols), packing its A rows once per nc columns (~1 cycle
// = 16 FMAs per element) and streaming its B columns from L3 once per mc rows (~4 FMAs per
// element). Small M (BERT's 128 rows) splits N, so each thread reads half the weights; large M
// splits M, so no thread packs all of A. Ties go to more column groups.
void choose_grid(Plan& x, int threads) {
    const GemmKernels& g = *x.g;
    const int64_t row_units = ceil_div(x.p->m1 - x.p->m0, g.mr), col_units = x.q1 - x.q0;
    int64_t best = -1;
    for (int tn = threads; tn >= 1; --tn) {
        if (threads % tn != 0) continue;
        const int tm = threads / tn;
        const int64_t rows = ceil_div(row_units, tm) * g.mr, cols = ceil_div(col_units, tn) * g.nr;
        const int64_t cost = rows * cols + 16 * rows * ceil_div(cols, g.nc) + 4 * cols * ceil_div(rows, g.mc);
        if (best < 0 || cost < best) best = cost, x.tm = tm, x.tn = tn;
    }
}

// dst[p * nr + j] = src[p * rs + j] for p < k, j < nr: one k-block of a panel of B read in place.
// The panel widths of the micro-kernels (16 on AVX2, 12 on NEON) copy a row with a fixed-size loop
// the compiler turns into a few vector moves instead of a memcpy call per 64-byte row. Three
// alternated pairs of processes (node dist/bench/kernels/conv.bench.js --runs 400 --layers pw14p,pw14q):
// MobileNetV2's 1x1 384->64 at 14x14, 1 thread, 0.103-0.130 ms against 0.130-0.138 ms with memcpy;
// 576->96 at 14x14 and both on 2 threads within this VM's noise.
template <int64_t NR>
void copy_b_panel_fixed(int64_t k, const float* src, int64_t rs, float* dst) {
    for (int64_t p = 0; p < k; ++p, src += rs, dst += NR) {
        float row[NR];
        for (int64_t j = 0; j < NR; ++j) row[j] = src[j];
        for (int64_t j = 0; j < NR; ++j) dst[j] = row[j];
    }
}
void copy_b_panel(int64_t nr, int64_t k, const float* src, int64_t rs, float* dst) {
    if (nr == 16) return copy_b_panel_fixed<16>(k, src, rs, dst);
    if (nr == 12) return copy_b_panel_fixed<12>(k, src, rs, dst);
    for (int64_t p = 0; p < k; ++p) std::memcpy(dst + p * nr, src + p * rs, static_cast<size_t>(nr) * sizeof(float));
}

// C[i, j] *= beta over a sub-rectangle (beta other than 0 and 1).
void scale_c(const GemmProblem& p, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < c1; ++j) p.c[i * p.c_rs + j * p.c_cs] *= p.beta;
}

// The edge path: tile holds acc for panel columns [0, off + w); merge columns [off, off + w) into C
// at column col with the epilogue of the micro-kernel contract (e.add: R at (i, col), C's strides).
void merge_tile(const GemmProblem& p, const float* tile, int32_t nr, int64_t rows, int64_t i, int64_t off,
                int64_t w, int64_t col, const GemmTileParams& e) {
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t t = 0; t < w; ++t) {
            float* cp = p.c + (i + r) * p.c_rs + (col + t) * p.c_cs;
            const float init = e.load_c ? *cp : (e.add ? e.add[r * p.c_rs + t * p.c_cs] : 0.0f);
            float v = init + tile[r * nr + off + t] + (e.bias ? e.bias[t] : 0.0f) + (e.row_bias ? e.row_bias[r] : 0.0f);
            if (e.clamp) v = v < e.min ? e.min : (v > e.max ? e.max : v);
            *cp = v;
        }
    }
}

// One thread's sub-rectangle: rows [r0, r1), panels [qa, qb) clipped to columns [c0, c1).
void run_rect(const Plan& x, int64_t r0, int64_t r1, int64_t qa, int64_t qb, int64_t c0, int64_t c1,
              float* abuf, float* bbuf, float* tile) {
    const GemmKernels& g = *x.g;
    const GemmProblem& p = *x.p;
    const int64_t nr = g.nr, k = p.k;
    if (p.beta != 0.0f && p.beta != 1.0f) scale_c(p, r0, r1, c0, c1);
    const int64_t mblocks = ceil_div(r1 - r0, g.mc);
    const int64_t mc = round_up(ceil_div(r1 - r0, mblocks), g.mr);
    const int64_t nc_panels = g.nc / nr;
    for (int64_t jq = qa; jq < qb; jq += nc_panels) {
        const int64_t jq_end = std::min(qb, jq + nc_panels);
        for (int64_t kb = 0; kb < x.kblocks; ++kb) {
            const int64_t pc = kb * x.kc, kcur = std::max<int64_t>(0, std::min(x.kc, k - pc));
            GemmTileParams e;
            e.load_c = kb > 0 || p.beta != 0.0f;
            const bool last = kb == x.kblocks - 1;
            e.clamp = last && p.clamp;
            e.min = p.min, e.max = p.max;
            if (x.a_in_place) e.a_rs = p.a_rs, e.a_ks = p.a_cs;
            const bool copy_b = bbuf != nullptr && kcur > short_k;
            for (int64_t ic = r0; ic < r1; ic += mc) {
                const int64_t mcur = std::min(mc, r1 - ic);
                const float* ablock = p.a + (ic - p.a_row0) * p.a_rs + pc * p.a_cs;
                if (!x.a_in_place) g.f32_pack_a(g.mr, mcur, kcur, ablock, p.a_rs, p.a_cs, p.alpha, abuf);
                // Whether the tile at panel q spans panels q and q + 1 (a kernel of tile_panels 2): both
                // in this column block, from the same source (not the packed partial group of an
                // in-place B), starting at the rectangle's first column, written straight into C.
                auto span_at = [&](int64_t q) -> int64_t {
                    const bool pair = g.tile_panels >= 2 && q + 1 < jq_end && x.b.n_begin + q * nr >= c0 &&
                                      p.c_cs == 1 && !(x.b_in_place && (q == x.q_edge || q + 1 == x.q_edge));
                    return pair ? 2 : 1;
                };
                // The tile of panels [q, q + span) and row ir of this A block.
                auto tile_at = [&](int64_t q, int64_t span, int64_t ir) {
                    const int64_t panel_col = x.b.n_begin + q * nr;
                    const int64_t col = std::max(c0, panel_col), w = std::min(c1, panel_col + span * nr) - col;
                    const int64_t off = col - panel_col;
                    const float* bp;
                    if (x.b_in_place && q != x.q_edge && copy_b) {
                        bp = bbuf;  // filled by the row sweep below
                        e.b_ks = 0, e.b_next = kcur * nr;
                    } else if (x.b_in_place && q != x.q_edge) {
                        bp = p.b + pc * p.b_rs + panel_col;
                        e.b_ks = p.b_rs, e.b_next = nr;
                    } else {
                        bp = x.b.data + (x.b_in_place ? 0 : q * k * nr) + pc * nr;
                        e.b_ks = 0, e.b_next = k * nr;
                    }
                    e.bias = last && p.bias ? p.bias + col : nullptr;
                    const int64_t rows = std::min<int64_t>(g.mr, mcur - ir), i = ic + ir;
                    e.add = kb == 0 && p.add ? p.add + i * p.c_rs + col * p.c_cs : nullptr;
                    const float* ap = x.a_in_place ? ablock + ir * p.a_rs : abuf + ir * kcur;
                    e.row_bias = last && p.row_bias ? p.row_bias + i : nullptr;
                    if (off == 0 && p.c_cs == 1) {
                        g.f32(rows, w, kcur, ap, bp, p.c + i * p.c_rs + col, p.c_rs, e);
                    } else {  // span 1
                        GemmTileParams operands;
                        operands.a_rs = e.a_rs, operands.a_ks = e.a_ks, operands.b_ks = e.b_ks;
                        g.f32(rows, off + w, kcur, ap, bp, tile, nr, operands);
                        merge_tile(p, tile, g.nr, rows, i, off, w, col, e);
                    }
                };
                if (kcur <= short_k) {
                    // A short product (a 1x1 convolution of few input channels over many pixels)
                    // is bound by writing C: sweep it along C's rows, so the stores stream through
                    // mr rows at a time instead of touching all mc rows for every panel. B's block
                    // (kc x nc, at most 64 x 4096 floats) stays in L2.
                    for (int64_t ir = 0; ir < mcur; ir += g.mr) {
                        for (int64_t q = jq, span; q < jq_end; q += span) {
                            span = span_at(q);
                            tile_at(q, span, ir);
                        }
                    }
                } else {
                    for (int64_t q = jq, span; q < jq_end; q += span) {
                        span = span_at(q);
                        if (copy_b && q != x.q_edge) {
                            for (int64_t s = 0; s < span; ++s)
                                copy_b_panel(nr, kcur, p.b + pc * p.b_rs + x.b.n_begin + (q + s) * nr, p.b_rs,
                                             bbuf + s * kcur * nr);
                        }
                        for (int64_t ir = 0; ir < mcur; ir += g.mr) tile_at(q, span, ir);
                    }
                }
            }
        }
    }
}

Status check(const GemmKernels& g, const GemmProblem& p) {
    FLEXPIPE_CHECK_ARG(g.f32 && g.f32_pack_a && g.mr > 0 && g.nr > 0, "failed to run gemm: no kernels in the table");
    FLEXPIPE_CHECK_ARG(p.k >= 0 && p.m0 >= 0 && p.m0 <= p.m1 && p.n0 >= 0 && p.n0 <= p.n1,
                       "failed to run gemm: bad ranges (k=%lld, m=[%lld, %lld), n=[%lld, %lld))",
                       static_cast<long long>(p.k), static_cast<long long>(p.m0), static_cast<long long>(p.m1),
                       static_cast<long long>(p.n0), static_cast<long long>(p.n1));
    if (p.b_packed.data) {
        const GemmPackedB& b = p.b_packed;
        FLEXPIPE_CHECK_ARG(b.nr == g.nr && b.k == p.k && b.n_begin <= p.n0 && p.n1 <= b.n_end,
                           "failed to run gemm: packed B does not fit the problem (nr=%d vs %d, k=%lld vs %lld, "
                           "columns [%lld, %lld) vs [%lld, %lld))",
                           b.nr, g.nr, static_cast<long long>(b.k), static_cast<long long>(p.k),
                           static_cast<long long>(b.n_begin), static_cast<long long>(b.n_end),
                           static_cast<long long>(p.n0), static_cast<long long>(p.n1));
    } else {
        FLEXPIPE_CHECK_ARG(p.b || p.k == 0, "failed to run gemm: no B operand");
    }
    FLEXPIPE_CHECK_ARG(p.c && (p.a || p.k == 0), "failed to run gemm: no A or C operand");
    FLEXPIPE_CHECK_ARG(!p.add || p.beta == 0.0f, "failed to run gemm: an addend needs beta = 0 (beta=%g)",
                       static_cast<double>(p.beta));
    return Status::ok();
}

}  // namespace

int64_t gemm_packed_b_floats(int64_t k, int64_t cols, int32_t nr) { return ceil_div(cols, nr) * k * nr; }

void gemm_pack_b(const GemmKernels& g, const float* b, int64_t b_rs, int64_t b_cs, int64_t k, int64_t n0,
                 int64_t n1, float* dst) {
    gemm_pack_b_f32__ref(g.nr, k, n1 - n0, b + n0 * b_cs, b_rs, b_cs, dst);
}

size_t gemm_workspace_bytes(const GemmKernels& g, const GemmProblem& p, int threads) {
    return 64 + b_bytes(g, p) + static_cast<size_t>(std::max(threads, 1)) * thread_bytes(g, p);
}

int gemm_threads_fitting(const GemmKernels& g, const GemmProblem& p, size_t ws_bytes, int threads) {
    for (int t = threads; t >= 1; --t)
        if (gemm_workspace_bytes(g, p, t) <= ws_bytes) return t;
    return 0;
}

Status gemm_run(const GemmKernels& g, const GemmProblem& p, void* ws, size_t ws_bytes, int threads) {
    FLEXPIPE_RETURN_IF_ERROR(check(g, p));
    const int64_t rows = p.m1 - p.m0, cols = p.n1 - p.n0;
    if (rows == 0 || cols == 0) return Status::ok();
    int t = gemm_threads_fitting(g, p, ws_bytes, std::max(threads, 1));
    if (t == 0 || !ws) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run gemm: workspace of %zu bytes is too small (need %zu for 1 thread)",
                             ws_bytes, gemm_workspace_bytes(g, p, 1));
    }
    const int64_t fmas = std::max<int64_t>(1, rows) * cols * std::max<int64_t>(1, p.k);
    t = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, fmas / min_fmas_per_thread)));
    char* base = reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(ws), 64));
    Plan x;
    x.g = &g, x.p = &p;
    x.kblocks = kblocks_of(g, p.k), x.kc = kc_of(g, p.k);
    x.a_in_place = reads_a_in_place(p);
    x.b_in_place = reads_b_in_place(p);
    x.q_edge = ceil_div(cols, g.nr);
    x.dot_cols = 0;
    if (p.b_packed.data) {
        x.b = p.b_packed;
    } else if (x.b_in_place) {
        // Full nr-column groups are read in place. A last partial one is either narrow enough for
        // row dots (its columns copied transposed, e.g. the 49th pixel of a 7x7 plane) or packed
        // (zero-padded) so that no micro-kernel reads past B's rows.
        float* dst = reinterpret_cast<float*>(base);
        const int64_t full = cols / g.nr, tail = cols - full * g.nr;
        if (tail > 0 && tail <= gemm_dot_max_cols && x.a_in_place && p.a_cs == 1 &&
            (p.beta == 0.0f || p.beta == 1.0f)) {
            x.dot_cols = tail;
            x.q_edge = full;
            const float* src = p.b + p.n0 + full * g.nr;
            for (int64_t c = 0; c < tail; ++c)
                for (int64_t q = 0; q < p.k; ++q) dst[c * p.k + q] = src[q * p.b_rs + c];
        } else if (tail > 0) {
            x.q_edge = full;
            gemm_pack_b_f32__ref(g.nr, p.k, tail, p.b + (p.n0 + full * g.nr) * p.b_cs, p.b_rs, p.b_cs, dst);
        }
        x.b = GemmPackedB{dst, p.k, p.n0, p.n1, g.nr};
        base += b_bytes(g, p);
    } else {
        float* dst = reinterpret_cast<float*>(base);
        const int64_t panels = ceil_div(cols, g.nr);
        parallel_for(panels, t, [&](int64_t q0, int64_t q1) {
            const int64_t j0 = q0 * g.nr, j1 = std::min(cols, q1 * g.nr);
            gemm_pack_b_f32__ref(g.nr, p.k, j1 - j0, p.b + (p.n0 + j0) * p.b_cs, p.b_rs, p.b_cs, dst + j0 * p.k);
        });
        x.b = GemmPackedB{dst, p.k, p.n0, p.n1, g.nr};
        base += b_bytes(g, p);
    }
    x.q0 = (p.n0 - x.b.n_begin) / g.nr;
    x.q1 = x.dot_cols ? x.q_edge : ceil_div(p.n1 - x.b.n_begin, g.nr);
    const int64_t row_units = ceil_div(rows, g.mr);
    if (x.dot_cols) {
        // The narrow edge, by rows, before the tiles (its own parallel region when it is worth one).
        GemmTileParams e;
        e.load_c = p.beta != 0.0f;
        e.clamp = p.clamp, e.min = p.min, e.max = p.max;
        const int64_t col = p.n1 - x.dot_cols;
        e.bias = p.bias ? p.bias + col : nullptr;
        const int64_t dot_fmas = rows * x.dot_cols * std::max<int64_t>(1, p.k);
        const int team = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, dot_fmas / min_fmas_per_thread)));
        parallel_for(rows, team, [&](int64_t r0, int64_t r1) {
            GemmTileParams er = e;
            const int64_t i0 = p.m0 + r0;
            er.row_bias = p.row_bias ? p.row_bias + i0 : nullptr;
            er.add = p.add ? p.add + i0 * p.c_rs + col : nullptr;
            g.f32_dot(r1 - r0, x.dot_cols, p.k, p.a + (i0 - p.a_row0) * p.a_rs, p.a_rs, x.b.data, p.c + i0 * p.c_rs + col,
                      p.c_rs, er);
        });
        if (x.q1 == x.q0) return Status::ok();
    }
    const int64_t units = row_units * (x.q1 - x.q0);
    t = static_cast<int>(std::min<int64_t>(t, units));
    // One rectangle per thread. Smaller rectangles (4 per thread, taken from a shared counter so that
    // a slow core would cost only its share) were slower here: every rectangle packs its own A rows
    // (BERT's activations) or copies its own B panels (1x1 convolutions on 7x7 and 14x14 planes), so
    // 4 per thread did that work 4 times over. Both variants alternated in one process, 2 threads (an ad
    // hoc A/B, medians of 100-150 runs each): BERT-base at seq 128 150.4 vs 162.4 ms, MobileNetV2
    // 5.24 vs 5.65 ms in ops; ResNet-50 and SqueezeNet within 1%.
    choose_grid(x, t);
    const size_t per_thread = thread_bytes(g, p);
    const size_t tile_bytes = align_up(static_cast<size_t>(g.mr) * g.nr * sizeof(float), 64);
    const size_t b_copy_bytes =
        copies_b_panels(g, p) ? align_up(static_cast<size_t>(x.kc * g.nr * g.tile_panels) * sizeof(float), 64) : 0;
    const size_t a_bytes = per_thread - tile_bytes - b_copy_bytes;
    parallel_items(static_cast<int64_t>(x.tm) * x.tn, t, [&](int64_t id, int slot) {
        const int64_t ti = id / x.tn, tj = id % x.tn;
        const int64_t ua = row_units * ti / x.tm, ub = row_units * (ti + 1) / x.tm;
        const int64_t r0 = p.m0 + ua * g.mr, r1 = std::min(p.m1, p.m0 + ub * g.mr);
        const int64_t cu = x.q1 - x.q0;
        const int64_t qa = x.q0 + cu * tj / x.tn, qb = x.q0 + cu * (tj + 1) / x.tn;
        const int64_t c0 = std::max(p.n0, x.b.n_begin + qa * g.nr);
        const int64_t c1 = std::min(p.n1, x.b.n_begin + qb * g.nr);
        if (r0 >= r1 || c0 >= c1) return;
        float* abuf = reinterpret_cast<float*>(base + static_cast<size_t>(slot) * per_thread);
        char* mine = base + static_cast<size_t>(slot) * per_thread;
        float* bbuf = b_copy_bytes ? reinterpret_cast<float*>(mine + a_bytes) : nullptr;
        float* tile = reinterpret_cast<float*>(mine + a_bytes + b_copy_bytes);
        run_rect(x, r0, r1, qa, qb, c0, c1, abuf, bbuf, tile);
    });
    return Status::ok();
}

}  // namespace flexpipe
