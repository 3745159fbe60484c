// SPDX-License-Identifier: Apache-2.0
// Convolution by the narrow GEMM (see conv_narrow.h).
#include "runtime/conv_narrow.h"

#include <algorithm>
#include <cstring>

#include "common/align.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_gemm.h"
#include "runtime/gemm_narrow.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

constexpr int64_t max_phase_stride = 8;

int64_t round_up64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

bool planar(const ConvShape& s) { return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1; }

// Slots of the phases some tap uses along one axis; returns how many.
int64_t used_phases(int64_t kernel, int64_t stride, int64_t dilation, int64_t* slot) {
    bool used[max_phase_stride] = {};
    for (int64_t k = 0; k < kernel; ++k) used[(dilation * k) % stride] = true;
    int64_t n = 0;
    for (int64_t ph = 0; ph < stride; ++ph) slot[ph] = used[ph] ? n++ : -1;
    return n;
}

// Copies the padded input rows of output rows [oh0, oh0 + rows) into the phase planes for channels
// [c0, c1): plane (c, slot_h[ph], slot_w[pw]) row r, column q holds padded pixel
// ((oh0 + r) sh + ph, q sw + pw), zero outside the input.
void fill_phases(const ConvShape& s, const NarrowGeometry& g, const float* x, int64_t oh0, int64_t rows, float* planes,
                 int64_t c0, int64_t c1) {
    const int64_t H = s.in[1], W = s.in[2], sh = s.stride[1], sw = s.stride[2];
    const int64_t plane = g.rows * g.wq;
    for (int64_t c = c0; c < c1; ++c) {
        const float* xc = x + c * H * W;
        for (int64_t ph = 0; ph < sh; ++ph) {
            if (g.slot_h[ph] < 0) continue;
            for (int64_t pw = 0; pw < sw; ++pw) {
                if (g.slot_w[pw] < 0) continue;
                float* dst = planes + ((c * g.used_h + g.slot_h[ph]) * g.used_w + g.slot_w[pw]) * plane;
                // Columns q with 0 <= q sw + pw - pl < W: [q0, q1).
                const int64_t first = pw - s.pad[2];
                const int64_t q0 = std::min(g.wq, first >= 0 ? 0 : (-first + sw - 1) / sw);
                const int64_t q1 = std::max(q0, std::min(g.wq, W - first > 0 ? (W - first + sw - 1) / sw : 0));
                for (int64_t r = 0; r < rows; ++r) {
                    float* d = dst + r * g.wq;
                    const int64_t iy = (oh0 + r) * sh + ph - s.pad[1];
                    if (iy < 0 || iy >= H) {
                        std::fill(d, d + g.wq, 0.0f);
                        continue;
                    }
                    const float* row = xc + iy * W;  // column q reads row[q sw + first], >= 0 from q0 on
                    std::fill(d, d + q0, 0.0f);
                    if (sw == 1) {
                        if (q1 > q0) std::memcpy(d + q0, row + q0 + first, static_cast<size_t>(q1 - q0) * sizeof(float));
                    } else {
                        for (int64_t q = q0; q < q1; ++q) d[q] = row[q * sw + first];
                    }
                    std::fill(d + q1, d + g.wq, 0.0f);
                }
            }
        }
    }
}

// The row offsets of B: tap (c, kh, kw) -> its phase plane and shift (phases), c * plane (in place),
// p * col_rs (columns, col_rs = the slice's pixels).
void fill_offsets(const ConvShape& s, const NarrowGeometry& g, int64_t col_rs, int64_t* off) {
    if (g.b == NarrowB::in_place) {
        const int64_t plane = s.in[0] * s.in[1] * s.in[2];
        for (int64_t c = 0; c < g.k; ++c) off[c] = c * plane;
        return;
    }
    if (g.b == NarrowB::columns) {
        for (int64_t p = 0; p < g.k; ++p) off[p] = p * col_rs;
        return;
    }
    const int64_t KH = s.kernel[1], KW = s.kernel[2], sh = s.stride[1], sw = s.stride[2];
    const int64_t dh = s.dilation[1], dw = s.dilation[2], plane = g.rows * g.wq;
    for (int64_t c = 0, p = 0; c < s.in_channels; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw, ++p) {
                const int64_t planes = (c * g.used_h + g.slot_h[(dh * kh) % sh]) * g.used_w + g.slot_w[(dw * kw) % sw];
                off[p] = planes * plane + (dh * kh) / sh * g.wq + (dw * kw) / sw;
            }
}

}  // namespace

NarrowGeometry narrow_geometry(const ConvShape& s, int64_t slices) {
    NarrowGeometry g;
    const Im2colGeometry ig = im2col_geometry(s, slices);
    g.k = ig.k, g.pixels = ig.pixels, g.slice_pixels = ig.slice_pixels;
    g.max_cols = g.slice_pixels;
    if (conv_algo_applies(ConvAlgo::gemm1x1, s)) {
        g.b = NarrowB::in_place;
    } else if (planar(s) && s.stride[1] <= max_phase_stride && s.stride[2] <= max_phase_stride) {
        g.b = NarrowB::phases;
        const int64_t OH = s.out[1], OW = s.out[2];
        g.used_h = used_phases(s.kernel[1], s.stride[1], s.dilation[1], g.slot_h);
        g.used_w = used_phases(s.kernel[2], s.stride[2], s.dilation[2], g.slot_w);
        g.wq = OW + s.dilation[2] * (s.kernel[2] - 1) / s.stride[2];
        // A slice of S pixels starting anywhere spans at most (S - 1) / OW + 2 output rows.
        const int64_t out_rows = std::min(OH, (g.slice_pixels - 1) / OW + 2);
        g.rows = out_rows + s.dilation[1] * (s.kernel[1] - 1) / s.stride[1];
        g.b_floats = s.in_channels * g.used_h * g.used_w * g.rows * g.wq;
        g.max_cols = (out_rows - 1) * g.wq + OW;
    } else {
        g.b = NarrowB::columns;
        g.b_floats = g.k * g.slice_pixels;
    }
    return g;
}

int64_t conv_narrow_workspace_bytes(const ConvShape& s, int64_t slices, int threads) {
    const NarrowGeometry g = narrow_geometry(s, slices);
    return 64 + round_up64(8 * g.k) + round_up64(4 * g.b_floats) +
           static_cast<int64_t>(gemm_narrow_workspace_bytes(g.max_cols, threads));
}

Status conv_narrow(const GemmKernels& gk, Im2colFn im2col, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    const NarrowGeometry g = narrow_geometry(s, args.slices);
    const int64_t K = g.k, P = g.pixels, S = g.slice_pixels, M = s.out_channels, OW = s.out[2];
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
    int64_t* off = reinterpret_cast<int64_t*>(align_ptr(args.workspace, arena_alignment));
    float* bbuf = reinterpret_cast<float*>(reinterpret_cast<char*>(off) + round_up64(8 * K));
    char* gws = reinterpret_cast<char*>(bbuf) + round_up64(4 * g.b_floats);
    const size_t used = static_cast<size_t>(gws - static_cast<char*>(args.workspace));
    if (used > ws_bytes) return Status::error(StatusCode::invalid_argument, "failed to run Conv: workspace too small");
    if (g.b != NarrowB::columns) fill_offsets(s, g, 0, off);  // columns: per slice, below
    const int64_t max_off = g.b == NarrowB::phases ? *std::max_element(off, off + K) : 0;
    const int64_t extra_rows = s.dilation[1] * (s.kernel[1] - 1) / s.stride[1];
    for (int64_t n = 0; n < s.batch; ++n) {
        const float* xn = args.x + n * s.in_channels * in_plane;
        float* yn = args.y + n * M * P;
        const float* rn = args.residual ? args.residual + n * M * P : nullptr;
        for (int64_t p0 = 0; p0 < P; p0 += S) {
            const int64_t w = P - p0 < S ? P - p0 : S;
            NarrowProblem p;
            p.k = K, p.rows = M, p.a = args.w, p.b_off = off;
            p.c_rs = P, p.row_bias = args.bias;
            p.clamp = args.act.clamp, p.min = args.act.lo, p.max = args.act.hi;
            if (g.b == NarrowB::in_place) {
                p.b = xn + p0, p.cols = w, p.c = yn + p0, p.add = rn ? rn + p0 : nullptr;
            } else if (g.b == NarrowB::columns) {
                const int team = K * w < im2col_parallel_min_floats ? 1 : args.threads;
                parallel_for(K, team, [&](int64_t k0, int64_t k1) { im2col(s, s.in_channels, xn, p0, p0 + w, w, bbuf, k0, k1); });
                fill_offsets(s, g, w, off);  // columns w apart (the last slice may be shorter)
                p.b = bbuf, p.cols = w, p.c = yn + p0, p.add = rn ? rn + p0 : nullptr;
            } else {
                const int64_t oh0 = p0 / OW, oh1 = (p0 + w - 1) / OW;
                const int64_t rows = oh1 - oh0 + 1 + extra_rows;
                const int64_t first = p0 % OW, last = (oh1 - oh0) * g.wq + (p0 + w - 1) % OW;
                // Every tap of the slice's last pixel stays inside the planes (conv_narrow.h), so do the others.
                if (rows > g.rows || max_off + last >= g.b_floats)
                    return Status::error(StatusCode::internal, "failed to run Conv: narrow phase planes out of bounds");
                const int team = s.in_channels * rows * g.wq < im2col_parallel_min_floats ? 1 : args.threads;
                parallel_for(s.in_channels, team, [&](int64_t c0, int64_t c1) { fill_phases(s, g, xn, oh0, rows, bbuf, c0, c1); });
                p.b = bbuf + first, p.cols = last - first + 1;
                p.b_floats = s.in_channels * g.used_h * g.used_w * rows * g.wq;
                p.col_period = g.wq, p.col_valid = OW, p.col_first = first;
                p.c = yn + oh0 * OW, p.add = rn ? rn + oh0 * OW : nullptr;
            }
            FLEXPIPE_RETURN_IF_ERROR(gemm_narrow_run(gk, p, gws, ws_bytes - used, args.threads));
        }
    }
    return Status::ok();
}

}  // namespace flexpipe
