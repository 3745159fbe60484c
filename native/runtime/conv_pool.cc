// SPDX-License-Identifier: Apache-2.0
// A stem convolution and its max pool in bands of pool rows (see conv_pool.h).
#include "runtime/conv_pool.h"

#include <algorithm>
#include <cstring>

#include "common/align.h"
#include "kernels/conv_stem/conv_stem_rows.h"
#include "runtime/parallel.h"
#include "runtime/pool_run.h"

namespace flexpipe {

namespace {

int64_t pool_extent(const PoolShape& ps) { return (ps.kernel[1] - 1) * ps.dilation[1] + 1; }

// Conv rows [c0, c1) that pool rows [p0, p1) read.
void conv_rows_of(const ConvShape& cs, const PoolShape& ps, int64_t p0, int64_t p1, int64_t* c0, int64_t* c1) {
    window_span(p0, p1, ps.stride[1], ps.pad[1], pool_extent(ps), cs.out[1], c0, c1);
}

struct PerThread {
    int64_t ring = 0, input = 0, band = 0;  // bytes, 64-byte multiples
    int64_t total() const { return ring + input + band; }
};

PerThread per_thread(const ConvShape& cs, const FusedBands& b) {
    PerThread p;
    p.ring = round_up64(4 * stem_geometry(cs).floats);
    p.input = round_up64(4 * cs.in_channels * b.in_rows * cs.in[2]);
    p.band = round_up64(4 * cs.out_channels * b.mid_rows * cs.out[2]);
    return p;
}

}  // namespace

bool conv_pool_applies(const ConvShape& cs, const PoolShape& ps) {
    return stem_applies(cs) && ps.in[0] == 1 && ps.out[0] == 1 && ps.kernel[0] == 1 && ps.in[1] == cs.out[1] &&
           ps.in[2] == cs.out[2] && ps.planes == cs.batch * cs.out_channels && ps.out[1] >= 1 && ps.out[2] >= 1 &&
           pool_rows_apply(ps);
}

FusedBands conv_pool_bands(const ConvShape& cs, const PoolShape& ps) {
    return fused_bands(cs, ps.out[1], ps.stride[1], pool_extent(ps));
}

int64_t conv_pool_workspace_bytes(const ConvShape& cs, const PoolShape& ps, int threads) {
    return 64 + static_cast<int64_t>(std::max(threads, 1)) * per_thread(cs, conv_pool_bands(cs, ps)).total();
}

Status conv_pool_run(const ConvKernels& ck, const PoolKernels& pk, const ConvShape& cs, const PoolShape& ps,
                     const float* x, const float* w, const float* bias, const ConvActivation& act, float* y, void* ws,
                     size_t ws_bytes, int threads) {
    FLEXPIPE_CHECK_ARG(conv_pool_applies(cs, ps), "failed to run ConvMaxPool: the conv does not run by rows or the pool "
                                                  "does not match its output");
    const FusedBands b = conv_pool_bands(cs, ps);
    const PerThread pt = per_thread(cs, b);
    const int t =
        fused_threads(threads, ws, ws_bytes, [&](int n) { return conv_pool_workspace_bytes(cs, ps, n); });
    if (t == 0) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run ConvMaxPool: workspace of %zu bytes is too small (need %lld for 1 thread)",
                             ws_bytes, static_cast<long long>(conv_pool_workspace_bytes(cs, ps, 1)));
    }
    char* base = reinterpret_cast<char*>(align_ptr(ws, 64));
    const int64_t M = cs.out_channels, OW = cs.out[2];
    const int64_t POH = ps.out[1], POW = ps.out[2];
    const int64_t items = cs.batch * b.bands;
    parallel_items(items, t, [&](int64_t item, int slot) {
        const int64_t n = item / b.bands, band = item % b.bands;
        const int64_t p0 = band * b.out_rows, p1 = std::min(POH, p0 + b.out_rows);
        int64_t c0, c1;
        conv_rows_of(cs, ps, p0, p1, &c0, &c1);
        char* mine = base + static_cast<int64_t>(slot) * pt.total();
        float* conv = reinterpret_cast<float*>(mine + pt.ring + pt.input);
        conv_band_by_rows(ck.stem_rows, cs, n, c0, c1, x, w, bias, act, conv, reinterpret_cast<float*>(mine + pt.ring),
                          reinterpret_cast<float*>(mine));
        PoolShape sp = ps;
        sp.planes = 1;
        sp.in[1] = c1 - c0;
        sp.out[1] = p1 - p0;
        sp.pad[1] = c0 - (p0 * ps.stride[1] - ps.pad[1]);
        for (int64_t m = 0; m < M; ++m)
            pool_rows_f32(pk, sp, PoolKind::max, conv + m * (c1 - c0) * OW, y + ((n * M + m) * POH + p0) * POW, 0, p1 - p0);
    });
    return Status::ok();
}

}  // namespace flexpipe
