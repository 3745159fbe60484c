// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax and Hardmax ops (float32) with both axis conventions (opset < 13 and >= 13).
#include "kernels/softmax/softmax.h"
#include "runtime/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Input X, output Y (same dims), float32. ints: [axis (resolved, 0 <= axis < rank; 0 for a scalar),
// coerce_2d]. coerce_2d = 1 (opset < 13): X is viewed as [prod(dims[:axis]), prod(dims[axis:])] and
// normalized along the second dim; coerce_2d = 0: normalized along dims[axis] alone.
static Status run_softmax(const OpCall& c, SoftmaxFn fn) {
    const TensorView& x = c.in[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{x, "X"}, {c.out[0], "Y"}}));
    FLEXPIPE_CHECK_ARG(same_dims(x, c.out[0]), "failed to run %s: Y dims must equal X dims", c.name);
    const int64_t axis = c.ints[0];
    const bool coerce = c.ints[1] != 0;
    FLEXPIPE_CHECK_ARG((axis >= 0 && axis < x.rank) || (x.rank == 0 && axis == 0),
                       "failed to run %s: axis out of range (axis=%lld, rank=%d)", c.name,
                       static_cast<long long>(axis),
                       x.rank);
    const int ax = static_cast<int>(axis);
    const int64_t outer = x.span(0, ax);
    const int64_t n = x.rank == 0 ? 1 : (coerce ? x.span(ax, x.rank) : x.dims[ax]);
    const int64_t inner = x.rank == 0 || coerce ? 1 : x.span(ax + 1, x.rank);
    if (x.numel == 0) return Status::ok();
    const float* xd = x.as<float>();
    float* yd = c.out[0].as<float>();
    parallel_for(outer * inner, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t col = begin; col < end; ++col) {
            const int64_t off = (col / inner) * n * inner + col % inner;
            fn(xd + off, yd + off, n, inner);
        }
    });
    return Status::ok();
}

Status op_softmax(const OpCall& c) { return run_softmax(c, kernels().attention.softmax); }
Status op_log_softmax(const OpCall& c) { return run_softmax(c, logsoftmax_f32__ref); }
Status op_hardmax(const OpCall& c) { return run_softmax(c, hardmax_f32__ref); }

}  // namespace flexpipe
