// SPDX-License-Identifier: Apache-2.0
// Dispatch of one convolution to its algorithm's driver (see conv_run.h).
#include "runtime/conv_run.h"

#include <algorithm>

#include "common/align.h"
#include "runtime/conv_gemm.h"
#include "runtime/conv_narrow.h"
#include "runtime/conv_taps.h"
#include "runtime/parallel.h"

namespace flexpipe {

void conv_add_residual(const ConvShape& s, const ConvArgs& args) {
    const int64_t n = s.batch * s.out_channels * s.out[0] * s.out[1] * s.out[2];
    const ConvActivation act = args.act;
    const float* r = args.residual;
    float* y = args.y;
    parallel_for(n, args.threads, [&](int64_t i0, int64_t i1) {
        if (!act.clamp) {
            for (int64_t i = i0; i < i1; ++i) y[i] += r[i];
            return;
        }
        for (int64_t i = i0; i < i1; ++i) {
            const float v = y[i] + r[i];
            y[i] = v < act.lo ? act.lo : (v > act.hi ? act.hi : v);  // NaN stays NaN
        }
    });
}

void conv_clamp_output(const ConvShape& s, const ConvArgs& args) {
    if (!args.act.clamp) return;
    const int64_t n = s.batch * s.out_channels * s.out[0] * s.out[1] * s.out[2];
    const ConvActivation act = args.act;
    float* y = args.y;
    parallel_for(n, args.threads, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) y[i] = y[i] < act.lo ? act.lo : (y[i] > act.hi ? act.hi : y[i]);
    });
}

Status conv_run(const KernelTable& k, ConvAlgo a, const ConvShape& s, const ConvArgs& args, size_t ws_bytes) {
    if (args.residual && a != ConvAlgo::im2col && a != ConvAlgo::gemm1x1 && a != ConvAlgo::narrow) {
        ConvArgs plain = args;
        plain.residual = nullptr;
        plain.act = ConvActivation{};
        FLEXPIPE_RETURN_IF_ERROR(conv_run(k, a, s, plain, ws_bytes));
        conv_add_residual(s, args);
        return Status::ok();
    }
    switch (a) {
        case ConvAlgo::winograd63:
        case ConvAlgo::winograd23:
        case ConvAlgo::winograd63_lean:
        case ConvAlgo::winograd23_lean:
            conv_winograd(k.conv, a, s, args);
            return Status::ok();
        case ConvAlgo::im2col:
            return conv_im2col(k.gemm, k.conv.im2col, k.conv.stem_rows, s, args, ws_bytes);
        case ConvAlgo::gemm1x1:
            return conv_gemm1x1(k.gemm, s, args, ws_bytes);
        case ConvAlgo::narrow:
            return conv_narrow(k.gemm, k.conv.im2col, s, args, ws_bytes);
        case ConvAlgo::depthwise: {
            DepthwiseShape d{s.in_channels, s.in[1], s.in[2], s.out[1], s.out[2], s.stride[1], s.pad[1],
                             s.pad[2]};
            d.kh = s.kernel[1];
            d.kw = s.kernel[2];
            d.dilation = s.dilation[1];
            const bool three = d.kh == 3 && d.kw == 3 && d.dilation == 1;
            const DepthwiseFn fn = three ? k.conv.depthwise_3x3 : k.conv.depthwise_kxk;
            const int64_t planes = s.batch * s.in_channels, unit = three ? depthwise_plane_unit(d) : depthwise_kxk_plane_unit(d);
            parallel_for((planes + unit - 1) / unit, args.threads, [&](int64_t u0, int64_t u1) {
                fn(d, args.x, args.w, args.bias, args.y, args.act, u0 * unit, u1 * unit < planes ? u1 * unit : planes);
            });
            return Status::ok();
        }
        case ConvAlgo::grouped: {
            // Work items (image, group, band of rows) in a few ranges per thread, each thread with its own
            // scratch (conv_cost's workspace), zeroed once per range.
            const GroupedShape gs = grouped_shape(s);
            const GroupedGeometry g = grouped_geometry(gs);
            const int64_t per = (g.scratch_floats + 15) / 16 * 16;
            const int threads = args.threads < 1 ? 1 : args.threads;
            if (64 + static_cast<size_t>(threads * per) * sizeof(float) > ws_bytes)
                return Status::error(StatusCode::invalid_argument, "failed to run Conv: workspace too small for grouped");
            float* scratch = reinterpret_cast<float*>(align_ptr(args.workspace, arena_alignment));
            const int64_t items = s.batch * s.groups * g.bands;
            const int64_t ranges = threads == 1 ? 1 : std::min<int64_t>(items, threads * chunks_per_thread);
            parallel_items(ranges, threads, [&](int64_t c, int slot) {
                k.conv.grouped(gs, args.x, args.w, args.bias, args.y, args.act, scratch + slot * per, items * c / ranges,
                               items * (c + 1) / ranges);
            });
            return Status::ok();
        }
        case ConvAlgo::taps:
            return conv_taps(k.gemm, s, args, ws_bytes);
        case ConvAlgo::direct:
            break;
    }
    parallel_for(conv_work_items(s), args.threads,
                 [&](int64_t i0, int64_t i1) { k.conv.direct(s, args.x, args.w, args.bias, args.y, i0, i1); });
    conv_clamp_output(s, args);  // the direct kernel has no epilogue
    return Status::ok();
}

}  // namespace flexpipe
