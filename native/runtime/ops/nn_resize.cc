// SPDX-License-Identifier: Apache-2.0
// Resize op (float32; serves ONNX Resize 10-19 and Upsample 7-9 after the plan folds scales/sizes/roi).
#include "kernels/resize/resize.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/nn_pool.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"
#include "runtime/resize_run.h"

namespace flexpipe {

// Resize: input X (rank r >= 1), output Y (rank r; its dims are the resized sizes), and optionally the
// workspace (uint8) as a second output: with one, nearest and linear take the specialised path
// (runtime/resize_run.h) where it applies; everything else runs resize_f32__ref.
// ints: [r, mode (0 nearest, 1 linear, 2 cubic), coordinate_transformation_mode (0 half_pixel,
// 1 asymmetric, 2 pytorch_half_pixel, 3 tf_half_pixel_for_nn, 4 align_corners, 5 tf_crop_and_resize,
// 6 half_pixel_symmetric), nearest_mode (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil,
// 4 simple = Resize-10/Upsample), exclude_outside].
// floats: [cubic_coeff_a, extrapolation_value, then per axis: scale, length_resized, roi_start, roi_end]
// (see kernels/resize/resize.h for their meaning).
Status resize_with(const OpCall& c, const PoolKernels* k) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{x, "X"}, {y, "Y"}}));
    const int64_t rank = c.ints[0];
    FLEXPIPE_CHECK_ARG(rank >= 1 && rank == x.rank && rank == y.rank,
                       "failed to run Resize: X, Y and the attributes disagree on rank "
                       "(rank=%lld, X=%d, Y=%d)",
                       static_cast<long long>(rank), x.rank, y.rank);
    FLEXPIPE_CHECK_ARG(c.n_floats >= 2 + 4 * rank,
                       "failed to run Resize: expected %lld float attributes (got %d)",
                       static_cast<long long>(2 + 4 * rank), c.n_floats);
    const bool codes_ok = c.ints[1] >= 0 && c.ints[1] <= 2 && c.ints[2] >= 0 && c.ints[2] <= 6 &&
                          c.ints[3] >= 0 && c.ints[3] <= 4;
    FLEXPIPE_CHECK_ARG(codes_ok, "failed to run Resize: bad mode codes (mode=%lld, coord=%lld, nearest=%lld)",
                       static_cast<long long>(c.ints[1]), static_cast<long long>(c.ints[2]),
                       static_cast<long long>(c.ints[3]));
    ResizeParams p;
    p.rank = static_cast<int>(rank);
    p.mode = static_cast<ResizeMode>(c.ints[1]);
    p.coord = static_cast<ResizeCoord>(c.ints[2]);
    p.nearest = static_cast<ResizeNearest>(c.ints[3]);
    p.exclude_outside = c.ints[4] != 0;
    p.cubic_a = c.floats[0];
    p.extrapolation_value = static_cast<float>(c.floats[1]);
    for (int a = 0; a < p.rank; ++a) {
        ResizeAxis& ax = p.axis[a];
        ax.in = x.dims[a];
        ax.out = y.dims[a];
        ax.scale = c.floats[2 + 4 * a];
        ax.length_resized = c.floats[3 + 4 * a];
        ax.roi_start = c.floats[4 + 4 * a];
        ax.roi_end = c.floats[5 + 4 * a];
        FLEXPIPE_CHECK_ARG(ax.scale > 0.0, "failed to run Resize: scales must be > 0 (axis=%d, scale=%g)", a,
                           ax.scale);
        FLEXPIPE_CHECK_ARG(ax.in > 0 || ax.out == 0,
                           "failed to run Resize: cannot resize an empty axis (axis=%d)", a);
    }
    if (y.numel == 0) return Status::ok();
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    if (k != nullptr && c.n_out > 1) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::u8, c.name, "workspace"));
        const size_t bytes = static_cast<size_t>(c.out[1].numel);
        if (resize_fast_f32(*k, p, xd, yd, c.out[1].data, bytes, c.threads)) return Status::ok();
    }
    // The kernel expands tap combinations of all axes but the last into a fixed stack table.
    int64_t combos = 1;
    for (int a = 0; a + 1 < p.rank; ++a) {
        int most = 1;
        for (int64_t o = 0; o < p.axis[a].out && most < 4; ++o) {
            int64_t idx[4];
            double w[4];
            const int nt = resize_axis_taps(p, a, o, idx, w);
            most = nt > most ? nt : most;
        }
        combos *= most;
        if (combos > resize_max_combos) {
            return Status::error(StatusCode::unsupported,
                                 "failed to run Resize: too many interpolated axes (tap combinations > %d)",
                                 resize_max_combos);
        }
    }
    parallel_for(y.span(0, p.rank - 1), c.threads,
                 [&](int64_t begin, int64_t end) { resize_f32__ref(p, xd, yd, begin, end); });
    return Status::ok();
}

Status op_resize(const OpCall& c) {
    return resize_with(c, &kernels().pool);
}

}  // namespace flexpipe
