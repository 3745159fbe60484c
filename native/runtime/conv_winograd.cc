// SPDX-License-Identifier: Apache-2.0
// Winograd convolution driver (see conv_winograd.h).
#include "runtime/conv_winograd.h"

#include "common/align.h"
#include "kernels/winograd/winograd.h"
#include "runtime/parallel.h"

namespace flexpipe {


namespace {

struct Block {
    const ConvKernels* k;
    const WinogradTransforms* tr;
    const ConvShape* s;
    const ConvArgs* args;
    const WinogradGeometry* g;
    float* v;
    float* mw;  // threads * g->mw_floats
    float* u;   // lean: threads * a² * C * 16 floats (each thread's transformed panel); else null
    int64_t t0, nt;
};

// Stage 1: input transform of tiles [t0, t0 + nt), channel groups of 8, items (tile, group).
void input_stage(const Block& b, int64_t item_begin, int64_t item_end) {
    const ConvShape& s = *b.s;
    const WinogradGeometry& g = *b.g;
    const int64_t groups = (s.in_channels + 7) / 8, a2 = int64_t{g.alpha} * g.alpha;
    const int64_t h = s.in[1], w = s.in[2], plane = h * w;
    for (int64_t item = item_begin; item < item_end; ++item) {
        const int64_t tl = item / groups, cg = item % groups, t = b.t0 + tl;
        const int64_t n = t / (g.tiles_h * g.tiles_w), ty = t / g.tiles_w % g.tiles_h, tx = t % g.tiles_w;
        const int64_t c0 = cg * 8, nc = s.in_channels - c0 < 8 ? s.in_channels - c0 : 8;
        b.tr->input(b.args->x + (n * s.in_channels + c0) * plane, plane, h, w, ty * g.m - s.pad[1],
                    tx * g.m - s.pad[2], static_cast<int>(nc), b.v + tl * a2 * g.cv + c0, g.cv);
    }
}

// Stage 2 for one panel p and the 6-tile groups [q0, q1) of the block, using Mw buffer mw and, for the
// lean kernels, the panel buffer up (the panel's filter transformed here from its narrow GEMM panel).
void panel_stage(const Block& b, int64_t p, int64_t q0, int64_t q1, float* mw, float* up) {
    const ConvShape& s = *b.s;
    const WinogradGeometry& g = *b.g;
    const int64_t a2 = int64_t{g.alpha} * g.alpha, C = s.in_channels, M = s.out_channels;
    const int64_t tl0 = q0 * winograd_mr, tl1 = q1 * winograd_mr < b.nt ? q1 * winograd_mr : b.nt;
    if (up != nullptr) b.tr->filter_panel(b.args->w + p * C * 9 * winograd_nr, C, up);
    const float* panel = up != nullptr ? up : b.args->w + p * a2 * C * winograd_nr;
    for (int64_t xi = 0; xi < a2; ++xi) {
        const float* u = panel + xi * C * winograd_nr;
        for (int64_t tl = tl0; tl < tl1; tl += winograd_mr) {
            const int rows = static_cast<int>(tl1 - tl < winograd_mr ? tl1 - tl : winograd_mr);
            b.k->winograd_gemm(C, b.v + (tl * a2 + xi) * g.cv, a2 * g.cv, u,
                               mw + ((tl - tl0) * a2 + xi) * winograd_nr, a2 * winograd_nr, rows);
        }
    }
    const int64_t oh = s.out[1], ow = s.out[2], oplane = oh * ow;
    for (int64_t tl = tl0; tl < tl1; ++tl) {
        const int64_t t = b.t0 + tl;
        const int64_t n = t / (g.tiles_h * g.tiles_w), ty = t / g.tiles_w % g.tiles_h, tx = t % g.tiles_w;
        const int64_t oy = ty * g.m, ox = tx * g.m;
        const int rows = static_cast<int>(oh - oy < g.m ? oh - oy : g.m);
        const int cols = static_cast<int>(ow - ox < g.m ? ow - ox : g.m);
        for (int64_t half = 0; half < 2; ++half) {
            const int64_t oc0 = p * winograd_nr + half * 8;
            if (oc0 >= M) break;
            const int nc = static_cast<int>(M - oc0 < 8 ? M - oc0 : 8);
            b.tr->output(mw + (tl - tl0) * a2 * winograd_nr + half * 8, winograd_nr,
                         b.args->bias ? b.args->bias + oc0 : nullptr, b.args->y + (n * M + oc0) * oplane + oy * ow + ox,
                         oplane, ow, rows, cols, nc, b.args->act);
        }
    }
}

}  // namespace

void conv_winograd(const ConvKernels& k, ConvAlgo a, const ConvShape& s, const ConvArgs& args) {
    const WinogradGeometry g = winograd_geometry(a, s, args.slices);
    const int threads = args.threads < 1 ? 1 : args.threads;
    float* v = reinterpret_cast<float*>(align_ptr(args.workspace, arena_alignment));
    float* mw = v + (g.v_floats + 15) / 16 * 16;
    const bool lean = is_winograd_lean(a);
    const int64_t u_floats = int64_t{g.alpha} * g.alpha * s.in_channels * winograd_nr;
    Block b{&k, is_winograd63(a) ? &k.f63 : &k.f23, &s, &args, &g, v, mw, lean ? mw + threads * g.mw_floats : nullptr,
            0, 0};
    const int64_t groups_c = (s.in_channels + 7) / 8;
    for (int64_t t0 = 0; t0 < g.tiles; t0 += g.block) {
        b.t0 = t0;
        b.nt = g.tiles - t0 < g.block ? g.tiles - t0 : g.block;
        parallel_for(b.nt * groups_c, threads, [&](int64_t i0, int64_t i1) { input_stage(b, i0, i1); });
        // Items (panel, tile range), taken from a shared counter: split tiles only when panels alone
        // cannot give every thread chunks_per_thread items (the lean kernels, which transform the panel
        // per item: only when there are fewer panels than threads).
        const int64_t q = (b.nt + winograd_mr - 1) / winograd_mr;
        const int64_t want = static_cast<int64_t>(threads) * (lean ? 1 : chunks_per_thread);
        int64_t ranges = threads == 1 || g.panels >= want ? 1 : (want + g.panels - 1) / g.panels;
        if (ranges > q) ranges = q;
        const int64_t items = g.panels * ranges;
        parallel_items(items, threads, [&](int64_t it, int slot) {
            const int64_t p = it / ranges, r = it % ranges;
            panel_stage(b, p, q * r / ranges, q * (r + 1) / ranges, mw + slot * g.mw_floats,
                        lean ? b.u + slot * u_floats : nullptr);
        });
    }
}

}  // namespace flexpipe
