// SPDX-License-Identifier: Apache-2.0
// ConvDepthwise: a pointwise or stem Conv and the depthwise 3x3 Conv after it, fused by
// lib/model/fuse-conv-depthwise.ts and computed in bands of output rows (runtime/conv_depthwise.h).
#include <cmath>

#include "runtime/conv_depthwise.h"
#include "runtime/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/nn_spatial.h"

namespace flexpipe {

namespace {

Status read_activation(const OpCall& c, int64_t code, int at, ConvActivation* a) {
    FLEXPIPE_CHECK_ARG(code >= 0 && code <= 2, "failed to run %s: bad activation code %lld", c.name,
                       static_cast<long long>(code));
    a->clamp = code != 0;
    a->lo = code == 2 ? static_cast<float>(c.float_at(at, -INFINITY)) : 0.0f;
    a->hi = code == 2 ? static_cast<float>(c.float_at(at + 1, INFINITY)) : INFINITY;
    return Status::ok();
}

}  // namespace

// ConvDepthwise: inputs X [N, C, H, W], W1 [M, C, KH, KW], B1 [M] (optional), W2 [M, 1, 3, 3], B2 [M]
// (optional); outputs Y [N, M, OH, OW] = act2(Depthwise(act1(Conv(X) + B1)) + B2) and the workspace
// (uint8, conv_depthwise_workspace_bytes). ints: [first conv's spatial block, depthwise's spatial
// block, act1, act2], each block nsp = 2, kernel[2], strides[2], dilations[2], pads_begin[2],
// pads_end[2] (nn_spatial.h); act: 0 none, 1 Relu, 2 Clip with floats [min, max] at 0 (act1) and 2
// (act2). Both convolutions have groups 1 and M respectively; the middle dims follow from the first
// conv's attributes, Y's from the depthwise's.
Status op_conv_depthwise(const OpCall& c) {
    SpatialAttrs ca, da;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 0, true, &ca));
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, ca.next, true, &da));
    FLEXPIPE_RETURN_IF_ERROR(expect_ints(c, da.next + 2));
    FLEXPIPE_CHECK_ARG(ca.nsp == 2 && da.nsp == 2, "failed to run ConvDepthwise: 2-D only (got %d and %d spatial axes)",
                       ca.nsp, da.nsp);
    ConvActivation act1, act2;
    FLEXPIPE_RETURN_IF_ERROR(read_activation(c, c.ints[da.next], 0, &act1));
    FLEXPIPE_RETURN_IF_ERROR(read_activation(c, c.ints[da.next + 1], 2, &act2));
    const TensorView &x = c.in[0], &w1 = c.in[1], &w2 = c.in[3], &y = c.out[0];
    const char* names[] = {"X", "W1", "W2", "Y"};
    const TensorView* tensors[] = {&x, &w1, &w2, &y};
    for (int i = 0; i < 4; ++i) FLEXPIPE_RETURN_IF_ERROR(expect_dtype(*tensors[i], DType::f32, c.name, names[i]));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::u8, c.name, "workspace"));
    FLEXPIPE_CHECK_ARG(x.rank == 4 && w1.rank == 4 && w2.rank == 4 && y.rank == 4,
                       "failed to run ConvDepthwise: X, W1, W2 and Y must have rank 4 (got %d, %d, %d, %d)", x.rank,
                       w1.rank, w2.rank, y.rank);
    ConvShape cs;
    cs.batch = x.dims[0];
    cs.in_channels = x.dims[1];
    cs.out_channels = w1.dims[0];
    for (int a = 1; a < 3; ++a) {
        cs.in[a] = x.dims[1 + a];
        cs.kernel[a] = ca.kernel[a], cs.stride[a] = ca.stride[a], cs.dilation[a] = ca.dilation[a], cs.pad[a] = ca.pad[a];
        FLEXPIPE_CHECK_ARG(w1.dims[1 + a] == ca.kernel[a], "failed to run ConvDepthwise: W1 spatial dims disagree with kernel_shape");
        cs.out[a] = window_out_len(cs.in[a], ca.kernel[a], ca.stride[a], ca.dilation[a], ca.pad[a], ca.pad_end[a]);
        FLEXPIPE_CHECK_ARG(da.kernel[a] == 3 && da.dilation[a] == 1 && w2.dims[1 + a] == 3,
                           "failed to run ConvDepthwise: the depthwise must be 3x3 without dilation");
        const int64_t want = window_out_len(cs.out[a], 3, da.stride[a], 1, da.pad[a], da.pad_end[a]);
        FLEXPIPE_CHECK_ARG(y.dims[1 + a] == want,
                           "failed to run ConvDepthwise: output dim disagrees with the attributes (axis=%d, got=%lld, want=%lld)",
                           a - 1, static_cast<long long>(y.dims[1 + a]), static_cast<long long>(want));
    }
    const int64_t M = cs.out_channels;
    FLEXPIPE_CHECK_ARG(w1.dims[1] == cs.in_channels && w2.dims[0] == M && w2.dims[1] == 1 && y.dims[0] == cs.batch &&
                           y.dims[1] == M,
                       "failed to run ConvDepthwise: W1 must be [M, C, ...], W2 [M, 1, 3, 3] and Y [N, M, ...] (C=%lld, "
                       "M=%lld, W2=[%lld, %lld])",
                       static_cast<long long>(cs.in_channels), static_cast<long long>(M),
                       static_cast<long long>(w2.dims[0]), static_cast<long long>(w2.dims[1]));
    FLEXPIPE_CHECK_ARG(da.stride[1] == da.stride[2], "failed to run ConvDepthwise: the depthwise needs equal strides");
    const float* bias[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i) {
        const int at = 2 + 2 * i;
        if (c.n_in > at && c.in[at].present()) {
            FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[at], DType::f32, c.name, i == 0 ? "B1" : "B2"));
            FLEXPIPE_CHECK_ARG(c.in[at].rank == 1 && c.in[at].dims[0] == M, "failed to run ConvDepthwise: %s must be [%lld]",
                               i == 0 ? "B1" : "B2", static_cast<long long>(M));
            bias[i] = c.in[at].as<float>();
        }
    }
    DepthwiseShape ds{M, cs.out[1], cs.out[2], y.dims[2], y.dims[3], da.stride[1], da.pad[1], da.pad[2]};
    FLEXPIPE_CHECK_ARG(conv_depthwise_applies(cs, ds),
                       "failed to run ConvDepthwise: only a pointwise conv (1x1, stride 1, no padding) or one by rows "
                       "(<= 4 input channels, no dilation) fuses with a depthwise 3x3 of stride 1 or 2");
    if (y.numel == 0) return Status::ok();
    ConvDepthwiseArgs args;
    args.x = x.as<float>();
    args.w1 = w1.as<float>();
    args.b1 = bias[0];
    args.act1 = act1;
    args.w2 = w2.as<float>();
    args.b2 = bias[1];
    args.act2 = act2;
    args.y = y.as<float>();
    return conv_depthwise_run(kernels(), cs, ds, args, c.out[1].data, static_cast<size_t>(c.out[1].numel), c.threads);
}

}  // namespace flexpipe
