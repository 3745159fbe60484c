// SPDX-License-Identifier: Apache-2.0
// Convolution tap by tap over each tap's live output rectangle (see conv_taps.h).
#include "runtime/conv_taps.h"

#include <algorithm>

#include "common/align.h"
#include "runtime/conv_band_rows.h"
#include "runtime/gemm_driver.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

struct TapRect {
    int64_t ky = 0, kx = 0;
    int64_t oy0 = 0, oy1 = 0, ox0 = 0, ox1 = 0;
    int64_t pixels() const { return (oy1 - oy0) * (ox1 - ox0); }
};

TapRect tap_rect(const ConvShape& s, int64_t ky, int64_t kx) {
    TapRect r;
    r.ky = ky, r.kx = kx;
    conv_tap_span(s.in[1], s.out[1], s.stride[1], s.dilation[1], s.pad[1], ky, &r.oy0, &r.oy1);
    conv_tap_span(s.in[2], s.out[2], s.stride[2], s.dilation[2], s.pad[2], kx, &r.ox0, &r.ox1);
    return r;
}

// Whether the tap multiplies the input plane in place: whole output rows whose pixels are the input's,
// column for column (stride 1, equal widths, tap column offset 0).
bool in_place(const ConvShape& s, const TapRect& r) {
    return s.stride[1] == 1 && s.stride[2] == 1 && s.in[2] == s.out[2] && r.ox0 == 0 && r.ox1 == s.out[2] &&
           r.kx * s.dilation[2] == s.pad[2];
}

GemmProblem tap_problem(const ConvShape& s, int64_t cols, int64_t b_rs) {
    GemmProblem p;
    p.k = s.in_channels;
    p.a_rs = s.in_channels;
    p.a_in_place = true;
    p.b_rs = b_rs;
    p.b_in_place = true;
    p.m1 = s.out_channels;
    p.n1 = cols;
    return p;
}

}  // namespace

void conv_tap_span(int64_t in, int64_t out, int64_t stride, int64_t dilation, int64_t pad, int64_t k, int64_t* o0,
                   int64_t* o1) {
    // o * stride - pad + k * dilation in [0, in)
    const int64_t off = k * dilation - pad;
    int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
    if (hi > out) hi = out;
    if (lo > hi) lo = hi;
    *o0 = lo, *o1 = hi;
}

void conv_taps_pack_filter(const float* w, int64_t M, int64_t C, int64_t taps, float* wt) {
    for (int64_t t = 0; t < taps; ++t)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t c = 0; c < C; ++c) wt[(t * M + m) * C + c] = w[(m * C + c) * taps + t];
}

ConvTapsGeometry conv_taps_geometry(const ConvShape& s) {
    ConvTapsGeometry g;
    for (int64_t ky = 0; ky < s.kernel[1]; ++ky) {
        for (int64_t kx = 0; kx < s.kernel[2]; ++kx) {
            const TapRect r = tap_rect(s, ky, kx);
            if (r.pixels() == 0) continue;
            g.tap_pixels += r.pixels();
            if (in_place(s, r)) g.in_place = true;
            else g.copied_max = std::max(g.copied_max, r.pixels());
        }
    }
    return g;
}

int64_t conv_taps_workspace_bytes(const GemmKernels& g, const ConvShape& s, int threads) {
    const ConvTapsGeometry t = conv_taps_geometry(s);
    const int64_t P = s.out[1] * s.out[2];
    int64_t gemm = 0;
    if (t.in_place) gemm = static_cast<int64_t>(gemm_workspace_bytes(g, tap_problem(s, P, s.in[1] * s.in[2]), threads));
    if (t.copied_max > 0)
        gemm = std::max(gemm, static_cast<int64_t>(gemm_workspace_bytes(g, tap_problem(s, t.copied_max, t.copied_max), threads)));
    return 64 + round_up64(4 * s.in_channels * t.copied_max) + round_up64(4 * s.out_channels * t.copied_max) + gemm;
}

Status conv_taps(const GemmKernels& g, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    const int64_t C = s.in_channels, M = s.out_channels, H = s.in[1], W = s.in[2], OW = s.out[2];
    const int64_t P = s.out[1] * OW, taps = s.kernel[1] * s.kernel[2];
    const ConvTapsGeometry t = conv_taps_geometry(s);
    const int64_t need = conv_taps_workspace_bytes(g, s, 1);
    if (static_cast<int64_t>(ws_bytes) < need)
        return Status::error(StatusCode::invalid_argument, "failed to run Conv: taps needs a workspace of %lld bytes (got %zu)",
                             static_cast<long long>(need), ws_bytes);
    char* base = reinterpret_cast<char*>(align_ptr(args.workspace, 64));
    float* bbuf = reinterpret_cast<float*>(base);
    float* tbuf = reinterpret_cast<float*>(base + round_up64(4 * C * t.copied_max));
    char* gws = base + round_up64(4 * C * t.copied_max) + round_up64(4 * M * t.copied_max);
    const size_t gws_bytes = ws_bytes - static_cast<size_t>(gws - static_cast<char*>(args.workspace));
    const int threads = args.threads < 1 ? 1 : args.threads;
    for (int64_t n = 0; n < s.batch; ++n) {
        const float* x = args.x + n * C * H * W;
        float* y = args.y + n * M * P;
        parallel_for(M, threads, [&](int64_t m0, int64_t m1) {
            for (int64_t m = m0; m < m1; ++m) std::fill(y + m * P, y + (m + 1) * P, args.bias ? args.bias[m] : 0.0f);
        });
        for (int64_t tap = 0; tap < taps; ++tap) {
            const TapRect r = tap_rect(s, tap / s.kernel[2], tap % s.kernel[2]);
            const int64_t R = r.pixels();
            if (R == 0) continue;
            const float* wt = args.w + tap * M * C;
            const int64_t iy0 = r.oy0 * s.stride[1] - s.pad[1] + r.ky * s.dilation[1];
            const int64_t ix0 = r.ox0 * s.stride[2] - s.pad[2] + r.kx * s.dilation[2];
            if (in_place(s, r)) {  // whole rows: y[:, oy0:oy1, :] += W_t · x[:, iy0:iy0 + rows, :]
                GemmProblem p = tap_problem(s, R, H * W);
                p.a = wt;
                p.b = x + iy0 * W;
                p.c = y + r.oy0 * OW;
                p.c_rs = P;
                p.beta = 1.0f;
                FLEXPIPE_RETURN_IF_ERROR(gemm_run(g, p, gws, gws_bytes, threads));
                continue;
            }
            const int64_t cols = r.ox1 - r.ox0;
            parallel_for(C, threads, [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                    float* dst = bbuf + c * R;
                    const float* src = x + c * H * W;
                    for (int64_t oy = r.oy0; oy < r.oy1; ++oy) {
                        const float* row = src + (iy0 + (oy - r.oy0) * s.stride[1]) * W + ix0;
                        for (int64_t j = 0; j < cols; ++j) *dst++ = row[j * s.stride[2]];
                    }
                }
            });
            GemmProblem p = tap_problem(s, R, R);
            p.a = wt;
            p.b = bbuf;
            p.c = tbuf;
            p.c_rs = R;
            FLEXPIPE_RETURN_IF_ERROR(gemm_run(g, p, gws, gws_bytes, threads));
            parallel_for(M, threads, [&](int64_t m0, int64_t m1) {
                for (int64_t m = m0; m < m1; ++m) {
                    const float* src = tbuf + m * R;
                    for (int64_t oy = r.oy0; oy < r.oy1; ++oy) {
                        float* row = y + m * P + oy * OW + r.ox0;
                        for (int64_t j = 0; j < cols; ++j) row[j] += *src++;
                    }
                }
            });
        }
    }
    conv_clamp_output(s, args);  // the products have no epilogue
    return Status::ok();
}

}  // namespace flexpipe
