// SPDX-License-Identifier: Apache-2.0
// DepthToSpace and SpaceToDepth ops: dtype-agnostic block permutations of NCHW tensors.
#include <cstring>

#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Both ops move elements between a deep tensor D [N, C * b^2, H, W] and a spatial tensor
// S [N, C, H * b, W * b]: D[n, dc, h, w] = S[n, c, h * b + i, w * b + j] with dc = (i * b + j) * C + c
// (DCR) or dc = c * b^2 + i * b + j (CRD). DepthToSpace reads D and writes S; SpaceToDepth the reverse.
static Status block_permute(const OpCall& c, int64_t b, bool crd, bool to_space) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, c.name));
    FLEXPIPE_CHECK_ARG(b >= 1 && dtype_size(x.dtype) > 0,
                       "failed to run %s: bad blocksize or dtype (blocksize=%lld)",
                       c.name, static_cast<long long>(b));
    const TensorView& d = to_space ? x : y;
    const TensorView& s = to_space ? y : x;
    if (x.rank != 4 || y.rank != 4 || d.dims[0] != s.dims[0] || d.dims[1] != s.dims[1] * b * b ||
        d.dims[2] * b != s.dims[2] || d.dims[3] * b != s.dims[3]) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X and Y dims do not match blocksize %lld", c.name,
                             static_cast<long long>(b));
    }
    const size_t es = dtype_size(x.dtype);
    const int64_t cs = s.dims[1], h = d.dims[2], w = d.dims[3];
    const uint8_t* xd = static_cast<const uint8_t*>(x.data);
    uint8_t* yd = static_cast<uint8_t*>(y.data);
    // One task per spatial plane (n, c): its b^2 deep planes belong to no other task.
    parallel_for(s.dims[0] * cs, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t n = p / cs, ch = p % cs;
            for (int64_t i = 0; i < b; ++i)
                for (int64_t j = 0; j < b; ++j) {
                    const int64_t dc = crd ? ch * b * b + i * b + j : (i * b + j) * cs + ch;
                    for (int64_t hh = 0; hh < h; ++hh)
                        for (int64_t ww = 0; ww < w; ++ww) {
                            const int64_t at_d = ((n * cs * b * b + dc) * h + hh) * w + ww;
                            const int64_t at_s = ((p * h + hh) * b + i) * w * b + ww * b + j;
                            const int64_t from = to_space ? at_d : at_s, to = to_space ? at_s : at_d;
                            std::memcpy(yd + to * es, xd + from * es, es);
                        }
                }
        }
    });
    return Status::ok();
}

// DepthToSpace: input X [N, C, H, W]; output Y [N, C / b^2, H * b, W * b]. ints: [blocksize, mode]
// (mode 0 = DCR: source channel (i * b + j) * C' + c; mode 1 = CRD: source channel c * b^2 + i * b + j,
// for Y[n, c, h * b + i, w * b + j]).
Status op_depth_to_space(const OpCall& c) {
    return block_permute(c, c.ints[0], c.ints[1] != 0, true);
}

// SpaceToDepth: input X [N, C, H, W]; output Y [N, C * b^2, H / b, W / b]. ints: [blocksize].
// Y[n, (i * b + j) * C + c, h, w] = X[n, c, h * b + i, w * b + j].
Status op_space_to_depth(const OpCall& c) {
    return block_permute(c, c.ints[0], false, false);
}

}  // namespace flexpipe
