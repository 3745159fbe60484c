// SPDX-License-Identifier: Apache-2.0
// ConvMaxPool: a stem Conv and the MaxPool after it, fused by lib/model/fuse-conv-pool.ts and computed
// in bands of pool rows (runtime/conv_pool.h).
#include <cmath>

#include "runtime/conv_pool.h"
#include "runtime/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/nn_spatial.h"

namespace flexpipe {

// ConvMaxPool: inputs X [N, C, H, W], W [M, C, KH, KW], B [M] (optional); outputs Y [N, M, POH, POW] =
// MaxPool(act(Conv(X) + B)) and the workspace (uint8, conv_pool_workspace_bytes).
// ints: [group = 1, conv spatial block, pool spatial block, act = 0]; each block is nsp, kernel[nsp],
// strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp] (nn_spatial.h); act: 0 none, 1 Relu,
// 2 Clip with floats [min, max]. The conv's output dims follow from its attributes; POH and POW are the
// pool's floor formula over them or one more (ceil_mode).
Status op_conv_max_pool(const OpCall& c) {
    SpatialAttrs ca, pa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 1, true, &ca));
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, ca.next, true, &pa));
    FLEXPIPE_CHECK_ARG(ca.nsp == pa.nsp, "failed to run ConvMaxPool: the conv has %d spatial axes, the pool %d", ca.nsp,
                       pa.nsp);
    const int64_t act = c.int_at(pa.next, 0);
    FLEXPIPE_CHECK_ARG(c.ints[0] == 1 && act >= 0 && act <= 2,
                       "failed to run ConvMaxPool: bad attributes (group=%lld, act=%lld)",
                       static_cast<long long>(c.ints[0]), static_cast<long long>(act));
    const TensorView &x = c.in[0], &w = c.in[1], &y = c.out[0];
    const char* names[] = {"X", "W", "Y"};
    const TensorView* tensors[] = {&x, &w, &y};
    for (int i = 0; i < 3; ++i) FLEXPIPE_RETURN_IF_ERROR(expect_dtype(*tensors[i], DType::f32, c.name, names[i]));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::u8, c.name, "workspace"));
    const int rank = 2 + ca.nsp;
    FLEXPIPE_CHECK_ARG(x.rank == rank && w.rank == rank && y.rank == rank,
                       "failed to run ConvMaxPool: X, W and Y must have rank %d (got %d, %d, %d)", rank, x.rank, w.rank,
                       y.rank);
    ConvShape cs;
    cs.batch = x.dims[0];
    cs.in_channels = x.dims[1];
    cs.out_channels = w.dims[0];
    PoolShape ps;
    ps.planes = cs.batch * cs.out_channels;
    for (int i = 0; i < ca.nsp; ++i) {
        const int a = 3 - ca.nsp + i;
        cs.in[a] = x.dims[2 + i];
        cs.kernel[a] = ca.kernel[a], cs.stride[a] = ca.stride[a], cs.dilation[a] = ca.dilation[a], cs.pad[a] = ca.pad[a];
        FLEXPIPE_CHECK_ARG(w.dims[2 + i] == ca.kernel[a], "failed to run ConvMaxPool: W spatial dims disagree with kernel_shape");
        cs.out[a] = window_out_len(cs.in[a], ca.kernel[a], ca.stride[a], ca.dilation[a], ca.pad[a], ca.pad_end[a]);
        ps.in[a] = cs.out[a];
        ps.out[a] = y.dims[2 + i];
        ps.kernel[a] = pa.kernel[a], ps.stride[a] = pa.stride[a], ps.dilation[a] = pa.dilation[a];
        ps.pad[a] = pa.pad[a], ps.pad_end[a] = pa.pad_end[a];
        const int64_t floor_len = window_out_len(ps.in[a], pa.kernel[a], pa.stride[a], pa.dilation[a], pa.pad[a], pa.pad_end[a]);
        FLEXPIPE_CHECK_ARG(ps.out[a] == floor_len || ps.out[a] == floor_len + 1,
                           "failed to run ConvMaxPool: output dim disagrees with the attributes (axis=%d, got=%lld, want=%lld)",
                           i, static_cast<long long>(ps.out[a]), static_cast<long long>(floor_len));
    }
    FLEXPIPE_CHECK_ARG(w.dims[1] == cs.in_channels && y.dims[0] == cs.batch && y.dims[1] == cs.out_channels,
                       "failed to run ConvMaxPool: W must be [M, C, ...] and Y [N, M, ...] (C=%lld, W=[%lld, %lld])",
                       static_cast<long long>(cs.in_channels), static_cast<long long>(w.dims[0]),
                       static_cast<long long>(w.dims[1]));
    if (c.n_in > 2 && c.in[2].present()) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[2], DType::f32, c.name, "B"));
        FLEXPIPE_CHECK_ARG(c.in[2].rank == 1 && c.in[2].dims[0] == cs.out_channels,
                           "failed to run ConvMaxPool: B must be [%lld]", static_cast<long long>(cs.out_channels));
    }
    FLEXPIPE_CHECK_ARG(conv_pool_applies(cs, ps),
                       "failed to run ConvMaxPool: only a conv by rows (<= 4 input channels, no dilation) and a 2-D "
                       "max pool fuse");
    if (y.numel == 0) return Status::ok();
    ConvActivation a;
    a.clamp = act != 0;
    a.lo = act == 2 ? static_cast<float>(c.float_at(0, -INFINITY)) : 0.0f;
    a.hi = act == 2 ? static_cast<float>(c.float_at(1, INFINITY)) : INFINITY;
    const float* bias = c.n_in > 2 && c.in[2].present() ? c.in[2].as<float>() : nullptr;
    return conv_pool_run(kernels().conv, kernels().pool, cs, ps, x.as<float>(), w.as<float>(), bias, a, y.as<float>(),
                         c.out[1].data, static_cast<size_t>(c.out[1].numel), c.threads);
}

}  // namespace flexpipe
