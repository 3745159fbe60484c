// SPDX-License-Identifier: Apache-2.0
// Convolution by the narrow GEMM (see conv_narrow.h).
#include "runtime/conv_narrow.h"

#include "common/align.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_gemm.h"
#include "runtime/gemm_narrow.h"
#include "runtime/parallel.h"

namespace flexpipe {

Status conv_narrow(const GemmKernels& gk, Im2colFn im2col, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    const Im2colGeometry g = im2col_geometry(s, args.slices);
    const int64_t K = g.k, P = g.pixels, S = g.slice_pixels, M = s.out_channels;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
    const bool in_place = conv_algo_applies(ConvAlgo::gemm1x1, s);  // B is the input itself
    float* col = reinterpret_cast<float*>(align_ptr(args.workspace, arena_alignment));
    const size_t col_bytes = in_place ? 0 : align_up(static_cast<size_t>(K * S) * sizeof(float), 64);
    const size_t used = static_cast<size_t>(reinterpret_cast<char*>(col) - static_cast<char*>(args.workspace)) + col_bytes;
    if (used > ws_bytes) return Status::error(StatusCode::invalid_argument, "failed to run Conv: workspace too small");
    char* gws = reinterpret_cast<char*>(col) + col_bytes;
    for (int64_t n = 0; n < s.batch; ++n) {
        const float* xn = args.x + n * s.in_channels * in_plane;
        for (int64_t p0 = 0; p0 < P; p0 += S) {
            const int64_t w = P - p0 < S ? P - p0 : S;
            NarrowProblem p;
            p.k = K, p.rows = M, p.cols = w;
            p.a = args.w;
            if (in_place) {
                p.b = xn + p0, p.b_rs = P;
            } else {
                const int team = K * w < im2col_parallel_min_floats ? 1 : args.threads;
                parallel_for(K, team, [&](int64_t k0, int64_t k1) { im2col(s, s.in_channels, xn, p0, p0 + w, w, col, k0, k1); });
                p.b = col, p.b_rs = w;
            }
            p.c = args.y + n * M * P + p0, p.c_rs = P;
            p.row_bias = args.bias;
            p.add = args.residual ? args.residual + n * M * P + p0 : nullptr;
            p.clamp = args.act.clamp, p.min = args.act.lo, p.max = args.act.hi;
            FLEXPIPE_RETURN_IF_ERROR(gemm_narrow_run(gk, p, gws, ws_bytes - used, args.threads));
        }
    }
    return Status::ok();
}

}  // namespace flexpipe
