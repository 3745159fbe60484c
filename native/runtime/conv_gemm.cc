// SPDX-License-Identifier: Apache-2.0
// im2col + GEMM and 1x1 convolution drivers (see conv_gemm.h).
#include "runtime/conv_gemm.h"

#include <cstdint>

#include "common/align.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "kernels/im2col/im2col.h"
#include "runtime/conv_run.h"
#include "runtime/gemm_driver.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

// Columns of rows [k0, k1) of one slice of w pixels; the micro-kernel reads whole panels, so the columns
// past w of the last panel are zeroed.
void build_columns(Im2colFn im2col, const ConvShape& s, int64_t cg, const float* xg, int64_t p0, int64_t w,
                   int64_t nr, float* col, int64_t k0, int64_t k1) {
    const int64_t K = cg * s.kernel[0] * s.kernel[1] * s.kernel[2];
    im2col(s, cg, xg, p0, p0 + w, nr, col, k0, k1);
    const int64_t q = w / nr, used = w % nr;
    if (used == 0) return;
    for (int64_t k = k0; k < k1; ++k)
        for (int64_t t = used; t < nr; ++t) col[q * K * nr + k * nr + t] = 0.0f;
}

GemmProblem base_problem(const ConvShape& s, const ConvArgs& args, int64_t grp, int64_t k) {
    const int64_t mg = s.out_channels / s.groups;
    GemmProblem p;
    p.k = k;
    p.a = args.w + grp * mg * k;
    p.a_rs = k;
    p.a_in_place = true;  // the weights [M, K] are read where they are, not packed on every run
    p.m1 = mg;
    p.row_bias = args.bias ? args.bias + grp * mg : nullptr;
    p.clamp = args.act.clamp;
    p.min = args.act.lo;
    p.max = args.act.hi;
    return p;
}

}  // namespace

// Few input channels: the stem convolution by rows (kernels/conv_stem/conv_stem_rows.h) with one ring of input rows per
// thread, when the workspace holds them. The workspace of an unsliced im2col (K x pixels columns) does;
// one cut down by many input slices may not, and then im2col + GEMM runs on its slices as before.
// Returns false when it did not run.
bool conv_rows(ConvStemRowsFn rows, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    if (rows == nullptr || !stem_applies(s)) return false;
    const StemGeometry g = stem_geometry(s);
    const int threads = args.threads < 1 ? 1 : args.threads;
    const int64_t per = (g.floats + 15) / 16 * 16;  // 64-byte aligned rings
    if (64 + static_cast<size_t>(threads * per) * sizeof(float) > ws_bytes) return false;
    float* ring = reinterpret_cast<float*>(align_ptr(args.workspace, arena_alignment));
    const int64_t n = s.batch * s.out[1];
    // A few chunks of consecutive rows per thread: each chunk fills its ring once (KH rows), then
    // advances it by the row stride.
    const int64_t chunks = threads == 1 ? 1 : (n < 2 * threads ? n : 2 * threads);
    parallel_items(chunks, threads, [&](int64_t c, int slot) {
        rows(s, args.x, args.w, args.bias, args.act, args.y, ring + slot * per, n * c / chunks, n * (c + 1) / chunks);
    });
    return true;
}

Status conv_im2col(const GemmKernels& gk, Im2colFn im2col, ConvStemRowsFn rows, const ConvShape& s, const ConvArgs& args,
                   size_t ws_bytes) {
    if (args.residual) {  // the rows kernels have no residual in their epilogue: add it afterwards
        ConvArgs plain = args;
        plain.residual = nullptr;
        plain.act = ConvActivation{};
        if (conv_rows(rows, s, plain, ws_bytes)) {
            conv_add_residual(s, args);
            return Status::ok();
        }
    } else if (conv_rows(rows, s, args, ws_bytes)) {
        return Status::ok();
    }
    const Im2colGeometry g = im2col_geometry(s, args.slices);
    const int64_t cg = s.in_channels / s.groups, mg = s.out_channels / s.groups, nr = gk.nr;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], P = g.pixels, K = g.k;
    float* col = reinterpret_cast<float*>(align_ptr(args.workspace, arena_alignment));
    char* gws = reinterpret_cast<char*>(col + K * ((g.slice_pixels + nr - 1) / nr) * nr);
    const size_t used = static_cast<size_t>(gws - static_cast<char*>(args.workspace));
    if (used > ws_bytes) return Status::error(StatusCode::invalid_argument, "failed to run Conv: workspace too small");
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t grp = 0; grp < s.groups; ++grp) {
            const float* xg = args.x + (n * s.in_channels + grp * cg) * in_plane;
            for (int64_t p0 = 0; p0 < P; p0 += g.slice_pixels) {
                const int64_t w = P - p0 < g.slice_pixels ? P - p0 : g.slice_pixels;
                // One parallel region per slice builds the columns; small slices run inline.
                float* yc = args.y + (n * s.out_channels + grp * mg) * P + p0;
                const int team = K * w < im2col_parallel_min_floats ? 1 : args.threads;
                parallel_for(K, team, [&](int64_t k0, int64_t k1) { build_columns(im2col, s, cg, xg, p0, w, nr, col, k0, k1); });
                GemmProblem p = base_problem(s, args, grp, K);
                p.b_packed = GemmPackedB{col, K, 0, w, gk.nr};
                p.c = yc;
                p.c_rs = P;
                p.add = args.residual ? args.residual + (yc - args.y) : nullptr;
                p.n1 = w;
                FLEXPIPE_RETURN_IF_ERROR(gemm_run(gk, p, gws, ws_bytes - used, args.threads));
            }
        }
    }
    return Status::ok();
}

Status conv_gemm1x1(const GemmKernels& gk, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    const Im2colGeometry g = im2col_geometry(s, args.slices);
    const int64_t cg = s.in_channels / s.groups, mg = s.out_channels / s.groups, P = g.pixels;
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t grp = 0; grp < s.groups; ++grp) {
            float* yg = args.y + (n * s.out_channels + grp * mg) * P;
            for (int64_t p0 = 0; p0 < P; p0 += g.slice_pixels) {
                const int64_t w = P - p0 < g.slice_pixels ? P - p0 : g.slice_pixels;
                GemmProblem p = base_problem(s, args, grp, cg);
                p.b = args.x + (n * s.in_channels + grp * cg) * P;
                p.b_rs = P;
                p.b_in_place = true;  // NCHW input rows: full 16-pixel groups need no packing
                p.c = yg;
                p.c_rs = P;
                p.add = args.residual ? args.residual + (yg - args.y) : nullptr;
                p.n0 = p0;
                p.n1 = p0 + w;
                FLEXPIPE_RETURN_IF_ERROR(gemm_run(gk, p, args.workspace, ws_bytes, args.threads));
            }
        }
    }
    return Status::ok();
}

}  // namespace flexpipe
