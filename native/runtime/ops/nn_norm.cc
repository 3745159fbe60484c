// SPDX-License-Identifier: Apache-2.0
// Normalization ops (float32): BatchNormalization, InstanceNormalization, LayerNormalization, LRN, MVN.
#include <cmath>

#include "kernels/norm/norm.h"
#include "runtime/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

// X [N, C, ...] float32 with Y alike, and `count` per-channel vectors of C float32 from input 1 on.
static Status check_channel_op(const OpCall& c, int count) {
    const TensorView& x = c.in[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{x, "X"}, {c.out[0], "Y"}}));
    if (x.rank < 2 || !same_dims(x, c.out[0])) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X must be [N, C, ...] and Y alike (rank=%d)",
                             c.name, x.rank);
    }
    for (int i = 1; i <= count; ++i) {
        const TensorView& v = c.in[i];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(v, DType::f32, c.name, "a per-channel input"));
        if (v.numel != x.dims[1]) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: input %d must hold C values (C=%lld, got %lld)", c.name, i,
                                 static_cast<long long>(x.dims[1]), static_cast<long long>(v.numel));
        }
    }
    return Status::ok();
}

// BatchNormalization: inputs X [N, C, ...], scale, B, mean, var (each [C]); outputs Y and, in training
// mode, running_mean and running_var ([C]).
// ints: [training_mode]; floats: [epsilon, momentum].
// Inference: Y = (X - mean) / sqrt(var + epsilon) * scale + B. Training: the same with the batch
// statistics (mean and population variance over N and spatial), and
// running_mean = mean * momentum + batch_mean * (1 - momentum) (likewise for var).
Status op_batch_norm(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_channel_op(c, 4));
    const bool training = c.int_at(0, 0) != 0;
    const double eps = c.float_at(0, 1e-5), momentum = c.float_at(1, 0.9);
    const TensorView& x = c.in[0];
    const int64_t n = x.dims[0], ch = x.dims[1], inner = x.span(2, x.rank);
    const float* xd = x.as<float>();
    float* yd = c.out[0].as<float>();
    const float* scale = c.in[1].as<float>();
    const float* bias = c.in[2].as<float>();
    const float* mean = c.in[3].as<float>();
    const float* var = c.in[4].as<float>();
    float* run_mean = nullptr;
    float* run_var = nullptr;
    for (int i = 1; i < c.n_out && training; ++i) {
        if (!c.out[i].present() || c.out[i].data == nullptr) continue;
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[i], DType::f32, c.name, "running statistics"));
        FLEXPIPE_CHECK_ARG(c.out[i].numel == ch,
                           "failed to run BatchNormalization: output %d must hold C values", i);
        (i == 1 ? run_mean : run_var) = c.out[i].as<float>();
    }
    parallel_for(ch, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t ci = begin; ci < end; ++ci) {
            double m = mean[ci], v = var[ci];
            if (training) {  // combine per-plane moments (equal sizes): E[var_n] + Var[mean_n]
                double sm = 0.0, sv = 0.0, smm = 0.0;
                for (int64_t ni = 0; ni < n; ++ni) {
                    double pm, pv;
                    moments_f32__ref(xd + (ni * ch + ci) * inner, inner, &pm, &pv);
                    sm += pm, sv += pv, smm += pm * pm;
                }
                const double bm = n > 0 ? sm / n : 0.0;
                const double bv = n > 0 ? sv / n + (smm / n - bm * bm) : 0.0;
                if (run_mean) run_mean[ci] = static_cast<float>(m * momentum + bm * (1.0 - momentum));
                if (run_var) run_var[ci] = static_cast<float>(v * momentum + bv * (1.0 - momentum));
                m = bm, v = bv;
            }
            const double a = scale[ci] / std::sqrt(v + eps);
            const float fa = static_cast<float>(a), fb = static_cast<float>(bias[ci] - m * a);
            for (int64_t ni = 0; ni < n; ++ni) {
                const int64_t off = (ni * ch + ci) * inner;
                scale_shift_f32__ref(xd + off, yd + off, inner, fa, fb);
            }
        }
    });
    return Status::ok();
}

// InstanceNormalization: inputs X [N, C, ...], scale [C], B [C]; output Y.
// floats: [epsilon]. Y = (X - mean) / sqrt(var + epsilon) * scale + B with statistics per (n, c) plane.
Status op_instance_norm(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_channel_op(c, 2));
    const double eps = c.float_at(0, 1e-5);
    const TensorView& x = c.in[0];
    const int64_t ch = x.dims[1], inner = x.span(2, x.rank);
    const float* xd = x.as<float>();
    float* yd = c.out[0].as<float>();
    const float* scale = c.in[1].as<float>();
    const float* bias = c.in[2].as<float>();
    parallel_for(x.dims[0] * ch, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            double m, v;
            moments_f32__ref(xd + p * inner, inner, &m, &v);
            const double a = scale[p % ch] / std::sqrt(v + eps);
            scale_shift_f32__ref(xd + p * inner, yd + p * inner, inner, static_cast<float>(a),
                                 static_cast<float>(bias[p % ch] - m * a));
        }
    });
    return Status::ok();
}

// LayerNormalization: inputs X, W (Scale), B (optional); outputs Y, Mean (optional), InvStdDev (optional).
// ints: [axis] (resolved, 0 <= axis < rank); floats: [epsilon]. X is seen as [rows, cols] split at
// axis; W and B hold cols values (or 1); Mean and InvStdDev hold rows values.
Status op_layer_norm(const OpCall& c) {
    const TensorView& x = c.in[0];
    const TensorView& w = c.in[1];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{x, "X"}, {w, "Scale"}, {c.out[0], "Y"}}));
    const int64_t axis = c.ints[0];
    FLEXPIPE_CHECK_ARG(axis >= 0 && axis < x.rank && same_dims(x, c.out[0]),
                       "failed to run LayerNormalization: bad axis or Y dims (axis=%lld, rank=%d)",
                       static_cast<long long>(axis), x.rank);
    const int64_t rows = x.span(0, static_cast<int>(axis)), cols = x.span(static_cast<int>(axis), x.rank);
    FLEXPIPE_CHECK_ARG(w.numel == cols || w.numel == 1,
                       "failed to run LayerNormalization: Scale must hold %lld values (got %lld)",
                       static_cast<long long>(cols), static_cast<long long>(w.numel));
    const float* bd = nullptr;
    int64_t b_n = 0;
    if (c.n_in > 2 && c.in[2].present()) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[2], DType::f32, c.name, "B"));
        b_n = c.in[2].numel;
        FLEXPIPE_CHECK_ARG(b_n == cols || b_n == 1,
                           "failed to run LayerNormalization: B must hold %lld values",
                           static_cast<long long>(cols));
        bd = c.in[2].as<float>();
    }
    float* stats[2] = {nullptr, nullptr};
    for (int i = 1; i < c.n_out; ++i) {
        if (!c.out[i].present() || c.out[i].data == nullptr) continue;
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[i], DType::f32, c.name, "Mean/InvStdDev"));
        FLEXPIPE_CHECK_ARG(c.out[i].numel == rows,
                           "failed to run LayerNormalization: output %d must hold %lld values",
                           i, static_cast<long long>(rows));
        stats[i - 1] = c.out[i].as<float>();
    }
    const float eps = static_cast<float>(c.float_at(0, 1e-5));
    const float* xd = x.as<float>();
    const float* wd = w.as<float>();
    float* yd = c.out[0].as<float>();
    const LayerNormRowFn row_fn = cols > 0 ? kernels().attention.layernorm_row : layernorm_row_f32__ref;  // SIMD: n >= 1
    parallel_for(rows, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            row_fn(xd + r * cols, yd + r * cols, cols, wd, w.numel, bd, b_n, eps,
                                   stats[0] ? stats[0] + r : nullptr, stats[1] ? stats[1] + r : nullptr);
        }
    });
    return Status::ok();
}

// LRN: input X [N, C, ...]; output Y. ints: [size]; floats: [alpha, beta, bias].
Status op_lrn(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(check_channel_op(c, 0));
    const int64_t size = c.ints[0];
    FLEXPIPE_CHECK_ARG(size >= 1, "failed to run LRN: size must be >= 1 (size=%lld)",
                       static_cast<long long>(size));
    const float alpha = static_cast<float>(c.float_at(0, 1e-4)), beta = static_cast<float>(c.float_at(1,
                                                                                                      0.75));
    const float bias = static_cast<float>(c.float_at(2, 1.0));
    const TensorView& x = c.in[0];
    const int64_t ch = x.dims[1], inner = x.span(2, x.rank);
    const float* xd = x.as<float>();
    float* yd = c.out[0].as<float>();
    parallel_for(x.dims[0], c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n)
            lrn_f32__ref(xd + n * ch * inner, yd + n * ch * inner, ch, inner, size, alpha, beta, bias);
    });
    return Status::ok();
}

// MeanVarianceNormalization: input X; output Y (same dims). ints: the reduced axes, resolved and
// strictly increasing. Y = (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over the reduced axes.
Status op_mvn(const OpCall& c) {
    const TensorView& x = c.in[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(x, DType::f32, c.name, "X"));
    FLEXPIPE_CHECK_ARG(same_dims(x, c.out[0]),
                       "failed to run MeanVarianceNormalization: Y dims must equal X dims");
    bool reduced[max_rank] = {false};
    for (int i = 0; i < c.n_ints; ++i) {
        const int64_t a = c.ints[i];
        FLEXPIPE_CHECK_ARG(a >= 0 && a < x.rank && !reduced[a],
                           "failed to run MeanVarianceNormalization: bad axis (axis=%lld)",
                           static_cast<long long>(a));
        reduced[a] = true;
    }
    int64_t strides[max_rank];
    dense_strides(x, strides);
    int64_t rdims[max_rank], rstr[max_rank], kdims[max_rank], kstr[max_rank];
    int nr = 0, nk = 0;
    for (int a = 0; a < x.rank; ++a) {
        if (reduced[a]) rdims[nr] = x.dims[a], rstr[nr++] = strides[a];
        else kdims[nk] = x.dims[a], kstr[nk++] = strides[a];
    }
    int64_t groups = 1;
    for (int i = 0; i < nk; ++i) groups *= kdims[i];
    if (x.numel == 0) return Status::ok();
    const float* xd = x.as<float>();
    float* yd = c.out[0].as<float>();
    parallel_for(groups, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g) {
            int64_t base = 0, rem = g;
            for (int i = nk - 1; i >= 0; --i) {
                base += (rem % kdims[i]) * kstr[i];
                rem /= kdims[i];
            }
            mvn_f32__ref(xd, yd, base, rdims, rstr, nr);
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
