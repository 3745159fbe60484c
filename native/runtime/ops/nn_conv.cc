// SPDX-License-Identifier: Apache-2.0
// Conv and ConvTranspose ops (float32, 1-D to 3-D spatial): checks, then row- or plane-parallel kernels.
#include "kernels/conv/conv.h"
#include "runtime/ops/nn_ops.h"
#include "runtime/ops/nn_spatial.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Checks shared by Conv and ConvTranspose: dtypes, ranks, bias. Fills the channel counts and the
// 3-D spatial input/output dims of `cs` from the tensors.
static Status check_conv_tensors(const OpCall& c, const char* op, const SpatialAttrs& sa, ConvShape* cs) {
    const TensorView& x = c.in[0];
    const TensorView& w = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(x, DType::f32, op, "X"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(w, DType::f32, op, "W"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::f32, op, "Y"));
    const int rank = 2 + sa.nsp;
    if (x.rank != rank || w.rank != rank || y.rank != rank) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X, W and Y must have rank %d (got %d, %d, %d)", op, rank,
                             x.rank,
                             w.rank, y.rank);
    }
    cs->groups = c.ints[0];
    FLEXPIPE_CHECK_ARG(cs->groups >= 1, "failed to run %s: group must be >= 1 (group=%lld)", op,
                       static_cast<long long>(cs->groups));
    cs->batch = x.dims[0];
    cs->in_channels = x.dims[1];
    cs->out_channels = y.dims[1];
    for (int i = 0; i < sa.nsp; ++i) {
        const int a = 3 - sa.nsp + i;
        cs->in[a] = x.dims[2 + i];
        cs->out[a] = y.dims[2 + i];
        cs->kernel[a] = sa.kernel[a];
        cs->stride[a] = sa.stride[a];
        cs->dilation[a] = sa.dilation[a];
        cs->pad[a] = sa.pad[a];
        if (w.dims[2 + i] != sa.kernel[a]) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: W spatial dims disagree with kernel_shape "
                                 "(axis=%d, W=%lld, kernel=%lld)",
                                 op, i, static_cast<long long>(w.dims[2 + i]),
                                 static_cast<long long>(sa.kernel[a]));
        }
    }
    if (y.dims[0] != cs->batch || cs->in_channels % cs->groups != 0 || cs->out_channels % cs->groups != 0) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: channels do not divide into groups "
                             "(C=%lld, M=%lld, group=%lld)",
                             op, static_cast<long long>(cs->in_channels),
                             static_cast<long long>(cs->out_channels),
                             static_cast<long long>(cs->groups));
    }
    if (c.n_in > 2 && c.in[2].present()) {
        const TensorView& b = c.in[2];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(b, DType::f32, op, "B"));
        if (b.rank != 1 || b.dims[0] != cs->out_channels) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: B must be [%lld] (got %lld elements)",
                                 op, static_cast<long long>(cs->out_channels),
                                 static_cast<long long>(b.numel));
        }
    }
    return Status::ok();
}

// Conv: inputs X [N, C, spatial...], W [M, C/group, kernel...], B [M] (optional); output Y [N, M, out...].
// ints: [group, nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp]]
// (auto_pad already resolved into explicit pads). Y's spatial dims must equal
// floor((in + pad_begin + pad_end - ((kernel - 1) * dilation + 1)) / stride) + 1.
Status op_conv(const OpCall& c) {
    const char* op = "Conv";
    FLEXPIPE_RETURN_IF_ERROR(expect_arity(c, op, 2, 3, 1, 1));
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, op, 1, true, &sa));
    ConvShape cs;
    FLEXPIPE_RETURN_IF_ERROR(check_conv_tensors(c, op, sa, &cs));
    const TensorView& w = c.in[1];
    if (w.dims[0] != cs.out_channels || w.dims[1] * cs.groups != cs.in_channels) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Conv: W must be [M, C/group, ...] "
                             "(W=[%lld, %lld], M=%lld, C=%lld)",
                             static_cast<long long>(w.dims[0]), static_cast<long long>(w.dims[1]),
                             static_cast<long long>(cs.out_channels), static_cast<long long>(cs.in_channels));
    }
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
    const float* bias = c.n_in > 2 && c.in[2].present() ? c.in[2].as<float>() : nullptr;
    const float* x = c.in[0].as<float>();
    const float* wd = w.as<float>();
    float* y = c.out[0].as<float>();
    const int64_t items = conv_work_items(cs);
    if (c.out[0].numel == 0) return Status::ok();
    parallel_for(items, c.threads, [&](int64_t begin, int64_t end) { conv_f32__ref(cs, x, wd, bias, y, begin,
                                                                                   end); });
    return Status::ok();
}

// ConvTranspose: inputs X [N, C, spatial...], W [C, M/group, kernel...], B [M] (optional); output
// Y [N, M, out...] whose spatial dims the plan fixed (output_shape / output_padding / pads resolved).
// ints: [group, nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp]]. Output position of
// input i and tap k is i * stride - pad_begin + k * dilation; positions outside Y are dropped.
Status op_conv_transpose(const OpCall& c) {
    const char* op = "ConvTranspose";
    FLEXPIPE_RETURN_IF_ERROR(expect_arity(c, op, 2, 3, 1, 1));
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, op, 1, false, &sa));
    ConvShape cs;
    FLEXPIPE_RETURN_IF_ERROR(check_conv_tensors(c, op, sa, &cs));
    const TensorView& w = c.in[1];
    if (w.dims[0] != cs.in_channels || w.dims[1] * cs.groups != cs.out_channels) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run ConvTranspose: W must be [C, M/group, ...] "
                             "(W=[%lld, %lld], C=%lld, M=%lld)",
                             static_cast<long long>(w.dims[0]), static_cast<long long>(w.dims[1]),
                             static_cast<long long>(cs.in_channels), static_cast<long long>(cs.out_channels));
    }
    const float* bias = c.n_in > 2 && c.in[2].present() ? c.in[2].as<float>() : nullptr;
    const float* x = c.in[0].as<float>();
    const float* wd = w.as<float>();
    float* y = c.out[0].as<float>();
    if (c.out[0].numel == 0) return Status::ok();
    parallel_for(cs.batch * cs.out_channels, c.threads,
                 [&](int64_t begin, int64_t end) { conv_transpose_f32__ref(cs, x, wd, bias, y, begin,
                                                                           end); });
    return Status::ok();
}

}  // namespace flexpipe
