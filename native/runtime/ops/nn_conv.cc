// SPDX-License-Identifier: Apache-2.0
// Conv and ConvTranspose ops (float32, 1-D to 3-D spatial): checks, then the chosen conv algorithm
// (direct, im2col + GEMM, 1x1 GEMM, Winograd F(6,3) / F(2,3), depthwise 3x3) or the transposed kernel.
#include <cmath>

#include "kernels/conv/conv.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_run.h"
#include "runtime/conv_transpose.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/nn_spatial.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Checks shared by Conv and ConvTranspose: dtypes, ranks, bias. Fills the channel counts and the
// 3-D spatial input/output dims of `cs` from the tensors.
// raw_w: W is [.., .., kernel...] (false for a transformed Winograd filter, checked by the caller).
static Status check_conv_tensors(const OpCall& c, const SpatialAttrs& sa, ConvShape* cs,
                                 bool raw_w = true) {
    const TensorView& x = c.in[0];
    const TensorView& w = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{x, "X"}, {w, "W"}, {y, "Y"}}));
    const int rank = 2 + sa.nsp;
    if (x.rank != rank || (raw_w && w.rank != rank) || y.rank != rank) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X, W and Y must have rank %d (got %d, %d, %d)", c.name, rank,
                             x.rank,
                             w.rank, y.rank);
    }
    cs->groups = c.ints[0];
    FLEXPIPE_CHECK_ARG(cs->groups >= 1, "failed to run %s: group must be >= 1 (group=%lld)", c.name,
                       static_cast<long long>(cs->groups));
    cs->batch = x.dims[0];
    cs->in_channels = x.dims[1];
    cs->out_channels = y.dims[1];
    set_window(sa, x, y, cs);
    for (int i = 0; i < sa.nsp; ++i) {
        const int a = 3 - sa.nsp + i;
        if (raw_w && w.dims[2 + i] != sa.kernel[a]) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: W spatial dims disagree with kernel_shape "
                                 "(axis=%d, W=%lld, kernel=%lld)",
                                 c.name, i, static_cast<long long>(w.dims[2 + i]),
                                 static_cast<long long>(sa.kernel[a]));
        }
    }
    if (y.dims[0] != cs->batch || cs->in_channels % cs->groups != 0 || cs->out_channels % cs->groups != 0) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: channels do not divide into groups "
                             "(C=%lld, M=%lld, group=%lld)",
                             c.name, static_cast<long long>(cs->in_channels),
                             static_cast<long long>(cs->out_channels),
                             static_cast<long long>(cs->groups));
    }
    if (c.n_in > 2 && c.in[2].present()) {
        const TensorView& b = c.in[2];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(b, DType::f32, c.name, "B"));
        if (b.rank != 1 || b.dims[0] != cs->out_channels) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: B must be [%lld] (got %lld elements)",
                                 c.name, static_cast<long long>(cs->out_channels),
                                 static_cast<long long>(b.numel));
        }
    }
    return Status::ok();
}

// Conv: inputs X [N, C, spatial...], W [M, C/group, kernel...], B [M] (optional), R [N, M, out...] (optional:
// a residual added before the activation, y = act(conv + B + R), the Add a Conv was fused with); output
// Y [N, M, out...], plus the workspace (uint8) as a second output when the algorithm needs one.
// ints: [group, nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp],
//        algo = 0, slices = 1, act = 0] (auto_pad already resolved into explicit pads; the last three are
// optional). algo is a ConvAlgo (runtime/conv_cost.h: 0 direct, 1 im2col, 2 gemm1x1, 3 winograd63,
// 4 winograd23, 5 depthwise, 6 narrow, 7 winograd63_lean, 8 winograd23_lean, 9 grouped, 10 taps); for
// Winograd, W arrives transformed by the prepack winograd_f63_filter / winograd_f23_filter, for narrow and
// the lean Winograd kernels packed by conv_narrow_filter, for grouped by grouped_filter, for taps by
// conv_taps_filter. slices: input
// slices (im2col, gemm1x1, narrow, Winograd tile blocks). act: 0 none, 1 Relu, 2 Clip with floats [min, max]. Y's spatial dims must equal
// floor((in + pad_begin + pad_end - ((kernel - 1) * dilation + 1)) / stride) + 1.
struct ConvPlan {
    ConvAlgo algo = ConvAlgo::direct;
    int64_t slices = 1;
    ConvActivation act;
};

static Status read_conv_plan(const OpCall& c, int at, ConvPlan* p) {
    const int64_t algo = c.int_at(at, 0), act = c.int_at(at + 2, 0);
    p->slices = c.int_at(at + 1, 1);
    FLEXPIPE_CHECK_ARG(algo >= 0 && algo < conv_algo_count && p->slices >= 1 && act >= 0 && act <= 2,
                       "failed to run Conv: bad algorithm attributes (algo=%lld, slices=%lld, act=%lld)",
                       static_cast<long long>(algo), static_cast<long long>(p->slices), static_cast<long long>(act));
    p->algo = static_cast<ConvAlgo>(algo);
    p->act.clamp = act != 0;
    p->act.lo = act == 2 ? static_cast<float>(c.float_at(0, -INFINITY)) : 0.0f;
    p->act.hi = act == 2 ? static_cast<float>(c.float_at(1, INFINITY)) : INFINITY;
    return Status::ok();
}

// W checks: [M, C/group, kernel...] raw, the transformed Winograd filter [ceil(M/16), a², C, 16],
// narrow's panels [ceil(M/16), K, 16], grouped's [group, K, M/group], or taps' [KH * KW, M, C].
// W is [A, B/group, ...]: Conv's W is [M, C/group, ...], ConvTranspose's [C, M/group, ...].
static Status check_weight_dims(const TensorView& w, const char* op, char a_name, int64_t a, char b_name,
                                int64_t b, int64_t groups) {
    if (w.dims[0] != a || w.dims[1] * groups != b) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: W must be [%c, %c/group, ...] (W=[%lld, %lld], %c=%lld, %c=%lld)",
                             op, a_name, b_name, static_cast<long long>(w.dims[0]),
                             static_cast<long long>(w.dims[1]), a_name, static_cast<long long>(a), b_name,
                             static_cast<long long>(b));
    }
    return Status::ok();
}

static Status check_conv_weight(const TensorView& w, const ConvShape& cs, ConvAlgo algo) {
    if (algo == ConvAlgo::winograd63 || algo == ConvAlgo::winograd23) {
        const int64_t a2 = is_winograd63(algo) ? 64 : 16;
        FLEXPIPE_CHECK_ARG(w.rank == 4 && w.dims[1] == a2 && w.dims[0] == (cs.out_channels + 15) / 16 &&
                               w.dims[2] == cs.in_channels && w.dims[3] == 16,
                           "failed to run Conv: %s needs the transformed filter [%lld, %lld, %lld, 16] (W rank=%d)",
                           conv_algo_name(algo), static_cast<long long>((cs.out_channels + 15) / 16),
                           static_cast<long long>(a2),
                           static_cast<long long>(cs.in_channels), w.rank);
        return Status::ok();
    }
    if (algo == ConvAlgo::narrow || is_winograd_lean(algo)) {
        const int64_t k = cs.in_channels / cs.groups * cs.kernel[0] * cs.kernel[1] * cs.kernel[2];
        FLEXPIPE_CHECK_ARG(w.rank == 3 && w.dims[0] == (cs.out_channels + 15) / 16 && w.dims[1] == k && w.dims[2] == 16,
                           "failed to run Conv: %s needs the packed filter [%lld, %lld, 16] of conv_narrow_filter "
                           "(W rank=%d)",
                           conv_algo_name(algo), static_cast<long long>((cs.out_channels + 15) / 16),
                           static_cast<long long>(k), w.rank);
        return Status::ok();
    }
    if (algo == ConvAlgo::taps) {
        const int64_t taps = cs.kernel[0] * cs.kernel[1] * cs.kernel[2];
        FLEXPIPE_CHECK_ARG(w.rank == 3 && w.dims[0] == taps && w.dims[1] == cs.out_channels && w.dims[2] == cs.in_channels,
                           "failed to run Conv: taps needs the filter [%lld, %lld, %lld] of conv_taps_filter (W rank=%d)",
                           static_cast<long long>(taps), static_cast<long long>(cs.out_channels),
                           static_cast<long long>(cs.in_channels), w.rank);
        return Status::ok();
    }
    if (algo == ConvAlgo::grouped) {
        const int64_t k = cs.in_channels / cs.groups * cs.kernel[0] * cs.kernel[1] * cs.kernel[2];
        FLEXPIPE_CHECK_ARG(w.rank == 3 && w.dims[0] == cs.groups && w.dims[1] == k && w.dims[2] == cs.out_channels / cs.groups,
                           "failed to run Conv: grouped needs the packed filter [%lld, %lld, %lld] of grouped_filter "
                           "(W rank=%d)",
                           static_cast<long long>(cs.groups), static_cast<long long>(k),
                           static_cast<long long>(cs.out_channels / cs.groups), w.rank);
        return Status::ok();
    }
    return check_weight_dims(w, "Conv", 'M', cs.out_channels, 'C', cs.in_channels, cs.groups);
}

static Status run_conv(const OpCall& c, const ConvShape& cs, const ConvPlan& plan, ConvArgs& a) {
    const KernelTable& k = kernels();
    int64_t ws_bytes = 0;
    if (c.n_out > 1) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::u8, c.name, "workspace"));
        a.workspace = c.out[1].data;
        ws_bytes = c.out[1].numel;
    }
    a.threads = conv_threads_for_workspace(plan.algo, cs, plan.slices, ws_bytes, c.threads, k.gemm);
    FLEXPIPE_CHECK_ARG(a.threads > 0, "failed to run Conv: %s needs a workspace of %lld bytes (got %lld)",
                       conv_algo_name(plan.algo),
                       static_cast<long long>(conv_cost(plan.algo, cs, plan.slices, 1, k.gemm).workspace_bytes),
                       static_cast<long long>(ws_bytes));
    return conv_run(k, plan.algo, cs, a, static_cast<size_t>(ws_bytes));
}

Status op_conv(const OpCall& c) {
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 1, true, &sa));
    ConvPlan plan;
    FLEXPIPE_RETURN_IF_ERROR(read_conv_plan(c, sa.next, &plan));
    const bool raw_w =
        !is_winograd(plan.algo) && plan.algo != ConvAlgo::narrow && plan.algo != ConvAlgo::grouped && plan.algo != ConvAlgo::taps;
    ConvShape cs;
    FLEXPIPE_RETURN_IF_ERROR(check_conv_tensors(c, sa, &cs, raw_w));
    FLEXPIPE_RETURN_IF_ERROR(check_conv_weight(c.in[1], cs, plan.algo));
    for (int a = 3 - sa.nsp; a < 3; ++a) {
        const int64_t want = window_out_len(cs.in[a], cs.kernel[a], cs.stride[a], cs.dilation[a], sa.pad[a],
                                            sa.pad_end[a]);
        if (cs.out[a] != want) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run Conv: output dim disagrees with the attributes "
                                 "(axis=%d, got=%lld, want=%lld)",
                                 a - (3 - sa.nsp), static_cast<long long>(cs.out[a]),
                                 static_cast<long long>(want));
        }
    }
    FLEXPIPE_CHECK_ARG(conv_algo_applies(plan.algo, cs), "failed to run Conv: %s does not apply to this shape",
                       conv_algo_name(plan.algo));
    if (c.out[0].numel == 0) return Status::ok();
    ConvArgs a;
    a.x = c.in[0].as<float>();
    a.w = c.in[1].as<float>();
    a.bias = c.n_in > 2 && c.in[2].present() ? c.in[2].as<float>() : nullptr;
    a.y = c.out[0].as<float>();
    a.act = plan.act;
    a.slices = plan.slices;
    if (c.n_in > 3 && c.in[3].present()) {
        const TensorView& r = c.in[3];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(r, DType::f32, c.name, "R"));
        bool same = r.rank == c.out[0].rank;
        for (int i = 0; same && i < r.rank; ++i) same = r.dims[i] == c.out[0].dims[i];
        FLEXPIPE_CHECK_ARG(same, "failed to run Conv: the residual R must have Y's shape (R rank=%d, %lld elements; Y %lld)",
                           r.rank, static_cast<long long>(r.numel), static_cast<long long>(c.out[0].numel));
        a.residual = r.as<float>();
    }
    return run_conv(c, cs, plan, a);
}

// ConvTranspose: inputs X [N, C, spatial...], W [C, M/group, kernel...], B [M] (optional); output
// Y [N, M, out...] whose spatial dims the plan fixed (output_shape / output_padding / pads resolved),
// plus the workspace (uint8) as a second output for the GEMM algorithm.
// ints: [group, nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], algo = 0, slices = 1]
// (the last two optional). algo 0: the reference scatter (kernels/conv); 1: GEMM + col2im over
// `slices` bands of input rows (runtime/conv_transpose.h), workspace conv_transpose_workspace_bytes.
// Output position of input i and tap k is i * stride - pad_begin + k * dilation; positions outside Y
// are dropped.
Status op_conv_transpose(const OpCall& c) {
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 1, false, &sa));
    const int64_t algo = c.int_at(sa.next, 0), slices = c.int_at(sa.next + 1, 1);
    FLEXPIPE_CHECK_ARG((algo == 0 || algo == 1) && slices >= 1,
                       "failed to run ConvTranspose: bad algorithm attributes (algo=%lld, slices=%lld)",
                       static_cast<long long>(algo), static_cast<long long>(slices));
    ConvShape cs;
    FLEXPIPE_RETURN_IF_ERROR(check_conv_tensors(c, sa, &cs));
    const TensorView& w = c.in[1];
    FLEXPIPE_RETURN_IF_ERROR(check_weight_dims(w, c.name, 'C', cs.in_channels, 'M', cs.out_channels, cs.groups));
    const float* bias = c.n_in > 2 && c.in[2].present() ? c.in[2].as<float>() : nullptr;
    const float* x = c.in[0].as<float>();
    const float* wd = w.as<float>();
    float* y = c.out[0].as<float>();
    if (c.out[0].numel == 0) return Status::ok();
    if (algo == 1) {
        void* ws = nullptr;
        size_t ws_bytes = 0;
        if (c.n_out > 1) {
            FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::u8, c.name, "workspace"));
            ws = c.out[1].data;
            ws_bytes = static_cast<size_t>(c.out[1].numel);
        }
        return conv_transpose_gemm(kernels().gemm, cs, x, wd, bias, y, ws, ws_bytes, slices, c.threads);
    }
    parallel_for(cs.batch * cs.out_channels, c.threads,
                 [&](int64_t begin, int64_t end) { conv_transpose_f32__ref(cs, x, wd, bias, y, begin,
                                                                           end); });
    return Status::ok();
}

}  // namespace flexpipe
