// SPDX-License-Identifier: Apache-2.0
// ConvTranspose as a GEMM and a col2im scatter (see conv_transpose.h).
#include "runtime/conv_transpose.h"

#include <algorithm>
#include <cstdint>

#include "common/align.h"
#include "runtime/gemm_driver.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

// Bytes of one band's column buffer, rounded up to a cache line.
size_t column_bytes(const ConvTransposeBands& b) {
    return align_up(static_cast<size_t>(b.col_rows * b.band_pixels) * sizeof(float), arena_alignment);
}

// The GEMM of one band: rows (m, k) of the column buffer, columns the band's pixels.
GemmProblem band_problem(const ConvShape& s, const ConvTransposeBands& b, const float* wg, const float* xband,
                         int64_t pixels, float* cols) {
    const int64_t cin_g = s.in_channels / s.groups;
    GemmProblem p;
    p.k = cin_g;
    p.a = wg;  // A[(m, k), c] = W[c, m, k]: rows 1 float apart, the reduction col_rows apart
    p.a_rs = 1;
    p.a_cs = b.col_rows;
    p.a_in_place = true;
    p.b = xband;  // B[c, q] = X[c, q0 + q]: the band's pixels of each input channel
    p.b_rs = s.in[0] * s.in[1] * s.in[2];
    p.b_in_place = true;
    p.c = cols;
    p.c_rs = b.band_pixels;
    p.m1 = b.col_rows;
    p.n1 = pixels;
    return p;
}

}  // namespace

ConvTransposeBands conv_transpose_bands(const ConvShape& s, int64_t slices) {
    ConvTransposeBands b;
    b.rows = s.in[0] * s.in[1];
    const int64_t n = std::max<int64_t>(1, std::min(slices, b.rows));
    b.band_rows = (b.rows + n - 1) / n;
    b.band_pixels = b.band_rows * s.in[2];
    b.col_rows = s.out_channels / s.groups * s.kernel[0] * s.kernel[1] * s.kernel[2];
    return b;
}

size_t conv_transpose_workspace_bytes(const GemmKernels& g, const ConvShape& s, int64_t slices, int threads) {
    const ConvTransposeBands b = conv_transpose_bands(s, slices);
    const GemmProblem p = band_problem(s, b, nullptr, nullptr, b.band_pixels, nullptr);
    return arena_alignment + column_bytes(b) + gemm_workspace_bytes(g, p, threads);
}

Status conv_transpose_gemm(const GemmKernels& g, const ConvShape& s, const float* x, const float* w,
                           const float* bias, float* y, void* workspace, size_t ws_bytes, int64_t slices,
                           int threads) {
    const ConvTransposeBands b = conv_transpose_bands(s, slices);
    const size_t col_bytes = column_bytes(b);
    const size_t need = conv_transpose_workspace_bytes(g, s, slices, 1);
    FLEXPIPE_CHECK_ARG(workspace != nullptr && ws_bytes >= need,
                       "failed to run ConvTranspose: the workspace of %zu bytes is too small (%lld slices on one "
                       "thread need %zu); size it with convTransposeWorkspaceBytes or raise the slice count",
                       ws_bytes, static_cast<long long>(slices), need);
    char* base = align_ptr(workspace, arena_alignment);
    float* cols = reinterpret_cast<float*>(base);
    void* gemm_ws = base + col_bytes;
    const size_t gemm_bytes = ws_bytes - static_cast<size_t>(base - reinterpret_cast<char*>(workspace)) - col_bytes;

    const int64_t cin_g = s.in_channels / s.groups, cout_g = s.out_channels / s.groups;
    const int64_t in_plane = b.rows * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    const int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2];
    // Taps closer together than the stride never reach the same output (PP-OCR det's 2x2 stride-2
    // upsampling): col2im then stores bias + column instead of adding to a bias-filled Y, and when
    // the taps also cover every output, Y needs no fill first. Y is then written once instead of
    // filled, read and written again.
    bool disjoint = true, covering = true;
    for (int a = 0; a < 3; ++a) {
        disjoint = disjoint && (s.kernel[a] - 1) * s.dilation[a] < s.stride[a];
        covering = covering && s.kernel[a] == s.stride[a] && s.dilation[a] == 1 &&
                   s.out[a] + s.pad[a] <= s.in[a] * s.stride[a];
    }
    if (!(disjoint && covering)) {
        const int64_t planes = s.batch * s.out_channels;
        parallel_for(planes, threads, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p)
                std::fill_n(y + p * out_plane, out_plane, bias ? bias[p % s.out_channels] : 0.0f);
        });
    }
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t grp = 0; grp < s.groups; ++grp) {
            const float* xg = x + (n * s.in_channels + grp * cin_g) * in_plane;
            const float* wg = w + grp * cin_g * b.col_rows;
            float* yg = y + (n * s.out_channels + grp * cout_g) * out_plane;
            for (int64_t r0 = 0; r0 < b.rows; r0 += b.band_rows) {
                const int64_t r1 = std::min(b.rows, r0 + b.band_rows);
                const GemmProblem p = band_problem(s, b, wg, xg + r0 * s.in[2], (r1 - r0) * s.in[2], cols);
                FLEXPIPE_RETURN_IF_ERROR(gemm_run(g, p, gemm_ws, gemm_bytes, threads));
                parallel_for(cout_g, threads, [&](int64_t m0, int64_t m1) {
                    for (int64_t m = m0; m < m1; ++m) {
                        float* yp = yg + m * out_plane;
                        const float bm = bias ? bias[grp * cout_g + m] : 0.0f;
                        for (int64_t k = 0; k < kvol; ++k) {
                            const int64_t kd = k / (s.kernel[1] * s.kernel[2]), kh = k / s.kernel[2] % s.kernel[1],
                                          kw = k % s.kernel[2];
                            const int64_t off = kw * s.dilation[2] - s.pad[2];  // ow = iw * stride + off
                            int64_t lo, hi;
                            conv_valid_range(off, s.stride[2], s.out[2], s.in[2], &lo, &hi);
                            if (lo >= hi) continue;
                            const float* src = cols + (m * kvol + k) * b.band_pixels;
                            for (int64_t r = r0; r < r1; ++r) {
                                const int64_t od = r / s.in[1] * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                                const int64_t oh = r % s.in[1] * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                                if (od < 0 || od >= s.out[0] || oh < 0 || oh >= s.out[1]) continue;
                                float* yr = yp + (od * s.out[1] + oh) * s.out[2];
                                const float* sr = src + (r - r0) * s.in[2];
                                const int64_t st = s.stride[2];
                                if (disjoint) {
                                    for (int64_t iw = lo; iw < hi; ++iw) yr[iw * st + off] = bm + sr[iw];
                                } else {
                                    for (int64_t iw = lo; iw < hi; ++iw) yr[iw * st + off] += sr[iw];
                                }
                            }
                        }
                    }
                });
            }
        }
    }
    return Status::ok();
}

}  // namespace flexpipe
