// SPDX-License-Identifier: Apache-2.0
// DepthToSpace and SpaceToDepth ops: dtype-agnostic block permutations of NCHW tensors.
#include <cstring>

#include "runtime/ops/nn_ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Copies one element of `size` bytes (1, 2, 4 or 8).
static inline void copy_elem(uint8_t* dst, const uint8_t* src, size_t size) { std::memcpy(dst, src, size); }

// Shared checks: 4-D X and Y of one dtype, with Y dims = the block permutation of X dims.
// depth_to_space: Y = [N, C / b^2, H * b, W * b]; else Y = [N, C * b^2, H / b, W / b].
static Status check_block(const OpCall& c, const char* op, bool depth_to_space, int64_t b) {
    FLEXPIPE_RETURN_IF_ERROR(expect_arity(c, op, 1, 1, 1, 1));
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, op));
    FLEXPIPE_CHECK_ARG(b >= 1 && dtype_size(x.dtype) > 0,
                       "failed to run %s: bad blocksize or dtype (blocksize=%lld)",
                       op, static_cast<long long>(b));
    bool ok = x.rank == 4 && y.rank == 4 && y.dims[0] == x.dims[0];
    if (ok && depth_to_space) {
        ok = x.dims[1] % (b * b) == 0 && y.dims[1] == x.dims[1] / (b * b) && y.dims[2] == x.dims[2] * b &&
             y.dims[3] == x.dims[3] * b;
    } else if (ok) {
        ok = x.dims[2] % b == 0 && x.dims[3] % b == 0 && y.dims[1] == x.dims[1] * b * b &&
        y.dims[2] == x.dims[2] / b &&
             y.dims[3] == x.dims[3] / b;
    }
    if (!ok) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X and Y dims do not match blocksize %lld", op,
                             static_cast<long long>(b));
    }
    return Status::ok();
}

// DepthToSpace: input X [N, C, H, W]; output Y [N, C / b^2, H * b, W * b]. ints: [blocksize, mode]
// (mode 0 = DCR: source channel (i * b + j) * C' + c; mode 1 = CRD: source channel c * b^2 + i * b + j,
// for Y[n, c, h * b + i, w * b + j]).
Status op_depth_to_space(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(expect_ints(c, "DepthToSpace", 2));
    const int64_t b = c.ints[0];
    const bool crd = c.ints[1] != 0;
    FLEXPIPE_RETURN_IF_ERROR(check_block(c, "DepthToSpace", true, b));
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    const size_t es = dtype_size(x.dtype);
    const int64_t cy = y.dims[1], h = x.dims[2], w = x.dims[3], cx = x.dims[1];
    const uint8_t* xd = static_cast<const uint8_t*>(x.data);
    uint8_t* yd = static_cast<uint8_t*>(y.data);
    parallel_for(y.dims[0] * cy, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t n = p / cy, ch = p % cy;
            for (int64_t i = 0; i < b; ++i)
                for (int64_t j = 0; j < b; ++j) {
                    const int64_t src_c = crd ? ch * b * b + i * b + j : (i * b + j) * cy + ch;
                    const uint8_t* xs = xd + ((n * cx + src_c) * h * w) * es;
                    for (int64_t hh = 0; hh < h; ++hh)
                        for (int64_t ww = 0; ww < w; ++ww) {
                            const int64_t yo = ((p * h * b) + hh * b + i) * w * b + ww * b + j;
                            copy_elem(yd + yo * es, xs + (hh * w + ww) * es, es);
                        }
                }
        }
    });
    return Status::ok();
}

// SpaceToDepth: input X [N, C, H, W]; output Y [N, C * b^2, H / b, W / b]. ints: [blocksize].
// Y[n, (i * b + j) * C + c, h, w] = X[n, c, h * b + i, w * b + j].
Status op_space_to_depth(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(expect_ints(c, "SpaceToDepth", 1));
    const int64_t b = c.ints[0];
    FLEXPIPE_RETURN_IF_ERROR(check_block(c, "SpaceToDepth", false, b));
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    const size_t es = dtype_size(x.dtype);
    const int64_t cx = x.dims[1], cy = y.dims[1], hy = y.dims[2], wy = y.dims[3];
    const uint8_t* xd = static_cast<const uint8_t*>(x.data);
    uint8_t* yd = static_cast<uint8_t*>(y.data);
    parallel_for(y.dims[0] * cy, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t n = p / cy, yc = p % cy;
            const int64_t blk = yc / cx, ch = yc % cx, i = blk / b, j = blk % b;
            const uint8_t* xs = xd + (n * cx + ch) * (hy * b) * (wy * b) * es;
            for (int64_t hh = 0; hh < hy; ++hh)
                for (int64_t ww = 0; ww < wy; ++ww) {
                    const int64_t xo = (hh * b + i) * (wy * b) + ww * b + j;
                    copy_elem(yd + ((p * hy + hh) * wy + ww) * es, xs + xo * es, es);
                }
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
