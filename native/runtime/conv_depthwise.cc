// SPDX-License-Identifier: Apache-2.0
// A convolution and the depthwise 3x3 after it in bands of depthwise output rows (see conv_depthwise.h).
#include "runtime/conv_depthwise.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/align.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "runtime/conv_cost.h"
#include "runtime/gemm_driver.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

constexpr int64_t depthwise_extent = 3;

// Middle rows [m0, m1) that depthwise output rows [r0, r1) read.
void mid_rows_of(const DepthwiseShape& ds, int64_t r0, int64_t r1, int64_t* m0, int64_t* m1) {
    window_span(r0, r1, ds.stride, ds.pad_top, depthwise_extent, ds.h, m0, m1);
}

// The pointwise GEMM of one band of `cols` middle columns (m1 - m0 rows of MW): Mid = W1 . X rows.
GemmProblem band_problem(const ConvShape& cs, int64_t cols) {
    GemmProblem p;
    p.k = cs.in_channels;
    p.a_rs = cs.in_channels;
    p.a_in_place = true;
    p.b_rs = cs.in[1] * cs.in[2];
    p.b_in_place = true;
    p.c_rs = cols;
    p.m1 = cs.out_channels;
    p.n1 = cols;
    return p;
}

struct PerThread {
    int64_t gemm = 0, ring = 0, input = 0, band = 0;  // bytes, 64-byte multiples
    int64_t total() const { return gemm + ring + input + band; }
};

PerThread per_thread(const KernelTable& k, const ConvShape& cs, const FusedBands& b) {
    PerThread p;
    if (conv_depthwise_pointwise(cs)) {
        p.gemm = round_up64(static_cast<int64_t>(gemm_workspace_bytes(k.gemm, band_problem(cs, b.mid_rows * cs.out[2]), 1)));
    } else {
        p.ring = round_up64(4 * stem_geometry(cs).floats);
        p.input = round_up64(4 * cs.in_channels * b.in_rows * cs.in[2]);
    }
    p.band = round_up64(4 * cs.out_channels * b.mid_rows * cs.out[2]);
    return p;
}

}  // namespace

bool conv_depthwise_pointwise(const ConvShape& cs) {
    return cs.groups == 1 && conv_algo_applies(ConvAlgo::gemm1x1, cs);
}

bool conv_depthwise_applies(const ConvShape& cs, const DepthwiseShape& ds) {
    const bool first = cs.in[0] == 1 && cs.out[0] == 1 && (conv_depthwise_pointwise(cs) || stem_applies(cs));
    return first && cs.batch >= 1 && ds.channels == cs.out_channels && ds.h == cs.out[1] && ds.w == cs.out[2] &&
           (ds.stride == 1 || ds.stride == 2) && ds.pad_top >= 0 && ds.pad_left >= 0 && ds.oh >= 1 && ds.ow >= 1 &&
           cs.out[1] >= 1 && cs.out[2] >= 1;
}

FusedBands conv_depthwise_bands(const ConvShape& cs, const DepthwiseShape& ds) {
    return fused_bands(cs, ds.oh, ds.stride, depthwise_extent);
}

int64_t conv_depthwise_workspace_bytes(const KernelTable& k, const ConvShape& cs, const DepthwiseShape& ds,
                                       int threads) {
    return 64 + static_cast<int64_t>(std::max(threads, 1)) * per_thread(k, cs, conv_depthwise_bands(cs, ds)).total();
}

Status conv_depthwise_run(const KernelTable& k, const ConvShape& cs, const DepthwiseShape& ds,
                          const ConvDepthwiseArgs& args, void* ws, size_t ws_bytes, int threads) {
    FLEXPIPE_CHECK_ARG(conv_depthwise_applies(cs, ds),
                       "failed to run ConvDepthwise: the first conv is neither pointwise nor by rows, or the "
                       "depthwise does not match its output");
    const FusedBands b = conv_depthwise_bands(cs, ds);
    const PerThread pt = per_thread(k, cs, b);
    const int t =
        fused_threads(threads, ws, ws_bytes, [&](int n) { return conv_depthwise_workspace_bytes(k, cs, ds, n); });
    if (t == 0) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run ConvDepthwise: workspace of %zu bytes is too small (need %lld for 1 thread)",
                             ws_bytes, static_cast<long long>(conv_depthwise_workspace_bytes(k, cs, ds, 1)));
    }
    char* base = reinterpret_cast<char*>(align_ptr(ws, 64));
    const bool pointwise = conv_depthwise_pointwise(cs);
    const int64_t C = cs.in_channels, M = cs.out_channels, H = cs.in[1], W = cs.in[2], MW = cs.out[2];
    const int64_t OH = ds.oh, OW = ds.ow;
    const int64_t items = cs.batch * b.bands;
    // The first failing band's status (the GEMM checks its problem; nothing else fails).
    Status failed = Status::ok();
    std::atomic<bool> any_failed{false};
    parallel_items(items, t, [&](int64_t item, int slot) {
        if (any_failed.load(std::memory_order_relaxed)) return;
        const int64_t n = item / b.bands, band = item % b.bands;
        const int64_t r0 = band * b.out_rows, r1 = std::min(OH, r0 + b.out_rows);
        int64_t m0, m1;
        mid_rows_of(ds, r0, r1, &m0, &m1);
        const int64_t rows = m1 - m0;
        char* mine = base + static_cast<int64_t>(slot) * pt.total();
        float* mid = reinterpret_cast<float*>(mine + pt.gemm + pt.ring + pt.input);
        if (pointwise) {
            GemmProblem p = band_problem(cs, rows * MW);
            p.a = args.w1;
            p.b = args.x + n * C * H * W + m0 * W;
            p.c = mid;
            p.row_bias = args.b1;
            p.clamp = args.act1.clamp, p.min = args.act1.lo, p.max = args.act1.hi;
            const Status s = gemm_run(k.gemm, p, mine, static_cast<size_t>(pt.gemm), 1);
            if (!s.is_ok()) {
                if (!any_failed.exchange(true)) failed = s;
                return;
            }
        } else {
            conv_band_by_rows(k.conv.stem_rows, cs, n, m0, m1, args.x, args.w1, args.b1, args.act1, mid,
                              reinterpret_cast<float*>(mine + pt.ring), reinterpret_cast<float*>(mine));
        }
        // The band's middle rows as planes of their own, written to rows [r0, r1) of Y's planes.
        DepthwiseShape sd = ds;
        sd.h = rows;
        sd.oh = r1 - r0;
        sd.pad_top = m0 - (r0 * ds.stride - ds.pad_top);
        sd.y_plane = OH * OW;
        k.conv.depthwise_3x3(sd, mid, args.w2, args.b2, args.y + (n * M * OH + r0) * OW, args.act2, 0, M);
    });
    return failed;
}

}  // namespace flexpipe
