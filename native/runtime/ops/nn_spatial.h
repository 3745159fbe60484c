// SPDX-License-Identifier: Apache-2.0
// Shared parsing of the spatial attributes (kernel, strides, dilations, pads) of conv and pool ops.
//
// Layout in OpCall::ints, starting at `at`: nsp (1..3), then kernel[nsp], stride[nsp],
// dilation[nsp], pad_begin[nsp] and, when with_pad_end, pad_end[nsp]. Values are stored into
// 3-entry arrays with leading unit axes (a 2-D kernel {3, 3} becomes {1, 3, 3}), the form the
// kernels in kernels/conv and kernels/pool take.
#pragma once

#include <cstdint>

#include "common/window.h"
#include "runtime/op_call.h"
#include "runtime/ops/op_helpers.h"

namespace flexpipe {

struct SpatialAttrs {
    int nsp = 0;
    int64_t kernel[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1};
    int64_t dilation[3] = {1, 1, 1};
    int64_t pad[3] = {0, 0, 0};
    int64_t pad_end[3] = {0, 0, 0};
    int next = 0;  // index of the first int after the spatial block
};

inline Status read_spatial(const OpCall& c, int at, bool with_pad_end, SpatialAttrs* s) {
    FLEXPIPE_CHECK_ARG(c.n_ints > at, "failed to run %s: missing spatial attributes (n_ints=%d)", c.name,
                       c.n_ints);
    const int64_t nsp = c.ints[at];
    FLEXPIPE_CHECK_ARG(nsp >= 1 && nsp <= 3, "failed to run %s: 1 to 3 spatial axes supported (nsp=%lld)",
                       c.name, static_cast<long long>(nsp));
    const int n = static_cast<int>(nsp);
    const int need = at + 1 + n * (with_pad_end ? 5 : 4);
    FLEXPIPE_RETURN_IF_ERROR(expect_ints(c, need));
    const int64_t* v = c.ints + at + 1;
    for (int i = 0; i < n; ++i) {
        const int a = 3 - n + i;
        s->kernel[a] = v[i];
        s->stride[a] = v[n + i];
        s->dilation[a] = v[2 * n + i];
        s->pad[a] = v[3 * n + i];
        s->pad_end[a] = with_pad_end ? v[4 * n + i] : 0;
        FLEXPIPE_CHECK_ARG(s->kernel[a] >= 1 && s->stride[a] >= 1 && s->dilation[a] >= 1,
                           "failed to run %s: kernel, stride and dilation must be >= 1 (axis=%d)", c.name, i);
        FLEXPIPE_CHECK_ARG(s->pad[a] >= 0 && s->pad_end[a] >= 0,
                           "failed to run %s: pads must be >= 0 (axis=%d, pad=%lld)", c.name, i,
                           static_cast<long long>(s->pad[a]));
    }
    s->nsp = n;
    s->next = need;
    return Status::ok();
}

// Copies the spatial attributes and x's and y's spatial dims ([N, C, spatial...]) into the 3-D window
// of a conv or pool shape, leading unit axes first.
inline void set_window(const SpatialAttrs& sa, const TensorView& x, const TensorView& y, Window3* w) {
    for (int i = 0; i < sa.nsp; ++i) {
        const int a = 3 - sa.nsp + i;
        w->in[a] = x.dims[2 + i];
        w->out[a] = y.dims[2 + i];
        w->kernel[a] = sa.kernel[a];
        w->stride[a] = sa.stride[a];
        w->dilation[a] = sa.dilation[a];
        w->pad[a] = sa.pad[a];
    }
}

// Output length of a conv/pool window sweep: floor((in + pads - extent) / stride) + 1, or 0 when the
// window does not fit at all.
inline int64_t window_out_len(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                              int64_t pad_end) {
    const int64_t extent = (k - 1) * dilation + 1;
    const int64_t span = in + pad + pad_end - extent;
    return span < 0 ? 0 : span / stride + 1;
}

}  // namespace flexpipe
