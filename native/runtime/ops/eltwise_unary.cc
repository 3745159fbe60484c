// SPDX-License-Identifier: Apache-2.0
// One-input elementwise ops: the Unary function family, IsNaN, IsInf, Clip and inference Dropout.
#include <cmath>
#include <cstring>

#include "runtime/dispatch.h"
#include "runtime/ops/eltwise_broadcast.h"
#include "runtime/ops/eltwise_ops.h"

namespace flexpipe {

namespace {

// Input and output are well-formed tensors; same_layout: also of one dtype and element count.
Status check_unary_io(const OpCall& call, bool same_layout) {
    FLEXPIPE_RETURN_IF_ERROR(check_tensor(call.in[0], call.name, "input"));
    FLEXPIPE_RETURN_IF_ERROR(check_tensor(call.out[0], call.name, "output"));
    return same_layout ? check_same_layout(call.in[0], call.out[0], call.name) : Status::ok();
}

void unary_rows(DType t, UnaryOp op, const UnaryParams& p, const void* x, void* y, int64_t begin,
                int64_t end) {
    const int64_t n = end - begin;
    switch (t) {
        case DType::f32:
            return kernels().eltwise.unary_f32(op, p, static_cast<const float*>(x) + begin,
                                          static_cast<float*>(y) + begin, n);
        case DType::f64:
            return unary_f64__ref(op, p, static_cast<const double*>(x) + begin,
                                  static_cast<double*>(y) + begin, n);
        case DType::f16:
            return unary_f16__ref(op, p, static_cast<const Half*>(x) + begin, static_cast<Half*>(y) + begin,
                                  n);
        default: {
            const int64_t size = static_cast<int64_t>(dtype_size(t));
            return unary_int__ref(t, op, static_cast<const char*>(x) + begin * size,
                                  static_cast<char*>(y) + begin * size, n);
        }
    }
}

bool is_float_dtype(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::f16; }

}  // namespace

// Unary: y = f(x) elementwise (Relu, Sigmoid, Tanh, Exp, ..., Not; the codes are UnaryOp in
// kernels/eltwise/eltwise.h, mirrored by lib/model/ops/eltwise-codes.ts).
// inputs: x. outputs: y, same dtype and element count as x.
// ints: [op]. floats: [alpha, beta, gamma], missing ones read as 0: LeakyRelu, Elu, Celu,
//   ThresholdedRelu use alpha; HardSigmoid alpha and beta; Selu alpha and gamma; Shrink lambd as alpha
//   and bias as beta.
// dtypes: every function on float32/float64/float16; identity, abs, neg, sign, relu on integer dtypes;
//   identity and logical_not on bool.
Status op_unary(const OpCall& call) {
    FLEXPIPE_RETURN_IF_ERROR(check_unary_io(call, true));
    const TensorView& x = call.in[0];
    const TensorView& y = call.out[0];
    const int64_t code = call.ints[0];
    const UnaryOp op = static_cast<UnaryOp>(code);
    if (code < 0 || code >= static_cast<int64_t>(UnaryOp::count) || !unary_supported(x.dtype, op)) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run Unary: function %lld is not defined for %s",
                             static_cast<long long>(code), dtype_name(x.dtype));
    }
    UnaryParams p;
    p.alpha = call.float_at(0, 0);
    p.beta = call.float_at(1, 0);
    p.gamma = call.float_at(2, 0);
    dense_run(x.numel, call.threads,
              [&](int64_t b, int64_t e) { unary_rows(x.dtype, op, p, x.data, y.data, b, e); });
    return Status::ok();
}

static Status run_classify(const OpCall& call, ClassifyOp op, bool all_false) {
    FLEXPIPE_RETURN_IF_ERROR(check_unary_io(call, false));
    const TensorView& x = call.in[0];
    const TensorView& y = call.out[0];
    if (!is_float_dtype(x.dtype)) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: input must be a float dtype (got %s)", call.name,
                             dtype_name(x.dtype));
    }
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::boolean, call.name, "output"));
    if (x.numel != y.numel) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: output has %lld elements, input %lld", call.name,
                             static_cast<long long>(y.numel), static_cast<long long>(x.numel));
    }
    if (all_false) {
        if (y.numel > 0) std::memset(y.data, 0, static_cast<size_t>(y.numel));
        return Status::ok();
    }
    const int64_t size = static_cast<int64_t>(dtype_size(x.dtype));
    dense_run(x.numel, call.threads, [&](int64_t b, int64_t e) {
        classify__ref(x.dtype, op, static_cast<const char*>(x.data) + b * size, y.as<uint8_t>() + b, e - b);
    });
    return Status::ok();
}

// IsNaN: y = isnan(x). inputs: x (float32/float64/float16). outputs: y (bool, same element count).
// ints: none. floats: none.
Status op_is_nan(const OpCall& call) {
    return run_classify(call, ClassifyOp::is_nan, false);
}

// IsInf: y = x is +inf (if detect_positive) or -inf (if detect_negative).
// inputs: x (float32/float64/float16). outputs: y (bool, same element count).
// ints: [detect_negative, detect_positive], each 0 or 1, default 1. floats: none.
Status op_is_inf(const OpCall& call) {
    const bool neg = call.int_at(0, 1) != 0;
    const bool pos = call.int_at(1, 1) != 0;
    const ClassifyOp op = neg && pos ? ClassifyOp::is_inf
                          : neg      ? ClassifyOp::is_neg_inf
                                     : ClassifyOp::is_pos_inf;
    return run_classify(call, op, !neg && !pos);
}

// Reads bound `i` (0 = min, 1 = max) of Clip into `dst` as one element of dtype t: from the optional
// input tensor when present, else from the attributes, else -inf/+inf saturated to t.
static Status clip_bound(const OpCall& call, int i, DType t, unsigned char* dst) {
    const char* what = i == 0 ? "min" : "max";
    if (call.n_in > i + 1 && call.in[i + 1].present()) {
        const TensorView& b = call.in[i + 1];
        FLEXPIPE_RETURN_IF_ERROR(check_tensor(b, call.name, what));
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(b, t, call.name, what));
        if (b.numel != 1) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run Clip: %s must have one element (numel=%lld)", what,
                                 static_cast<long long>(b.numel));
        }
        std::memcpy(dst, b.data, dtype_size(t));
        return Status::ok();
    }
    const bool has = call.int_at(i, 0) != 0;
    const bool integer = !is_float_dtype(t);
    if (has && integer) {
        const int64_t v = call.int_at(2 + i, 0);
        cast__ref(DType::i64, t, &v, dst, 1);
    } else {
        const double inf = i == 0 ? -INFINITY : INFINITY;
        const double v = has ? call.float_at(i, inf) : inf;
        cast__ref(DType::f64, t, &v, dst, 1);
    }
    return Status::ok();
}

// Clip: y = min(max(x, lo), hi); NaN stays NaN; lo > hi gives hi everywhere.
// inputs: x, [min], [max] — min and max are optional one-element tensors of x's dtype (-1 when the
//   bound is an attribute or absent).
// outputs: y, same dtype and element count as x.
// ints: [has_min, has_max, min_int, max_int]; floats: [min_float, max_float]. A present tensor
//   wins over the attributes; float dtypes read bounds from floats, integer dtypes from ints; a
//   missing bound is unbounded.
Status op_clip(const OpCall& call) {
    FLEXPIPE_RETURN_IF_ERROR(check_unary_io(call, true));
    const TensorView& x = call.in[0];
    const TensorView& y = call.out[0];
    if (x.dtype == DType::boolean) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run Clip: input must be numeric (got bool)");
    }
    alignas(8) unsigned char lo[8];
    alignas(8) unsigned char hi[8];
    FLEXPIPE_RETURN_IF_ERROR(clip_bound(call, 0, x.dtype, lo));
    FLEXPIPE_RETURN_IF_ERROR(clip_bound(call, 1, x.dtype, hi));
    const int64_t size = static_cast<int64_t>(dtype_size(x.dtype));
    if (x.dtype == DType::f32) {
        float l, h;
        std::memcpy(&l, lo, sizeof(l));
        std::memcpy(&h, hi, sizeof(h));
        const ClipF32Fn fn = kernels().eltwise.clip_f32;
        dense_run(x.numel, call.threads,
                  [&](int64_t b, int64_t e) { fn(x.as<float>() + b, y.as<float>() + b, e - b, l, h); });
        return Status::ok();
    }
    dense_run(x.numel, call.threads, [&](int64_t b, int64_t e) {
        clip__ref(x.dtype, static_cast<const char*>(x.data) + b * size, static_cast<char*>(y.data) + b * size,
                  e - b, lo, hi);
    });
    return Status::ok();
}

// Dropout at inference: y = x, mask = all ones.
// inputs: x, [ratio], [training_mode] — optional one-element tensors (float, bool); a true
//   training_mode with a non-zero ratio is unsupported (flexpipe does not train).
// outputs: y (x's dtype and element count), [mask] (bool, or x's dtype before opset 10; same count).
// ints: none. floats: [ratio] used when the ratio input is absent (default 0.5).
Status op_dropout(const OpCall& call) {
    FLEXPIPE_RETURN_IF_ERROR(check_unary_io(call, true));
    const TensorView& x = call.in[0];
    const TensorView& y = call.out[0];
    if (call.n_in > 2 && call.in[2].present()) {
        const TensorView& t = call.in[2];
        FLEXPIPE_RETURN_IF_ERROR(check_tensor(t, call.name, "training_mode"));
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(t, DType::boolean, call.name, "training_mode"));
        double ratio = call.float_at(0, 0.5);
        if (call.in[1].present()) {
            const TensorView& r = call.in[1];
            FLEXPIPE_RETURN_IF_ERROR(check_tensor(r, call.name, "ratio"));
            if (r.numel != 1)
                return Status::error(StatusCode::shape_mismatch,
                                     "failed to run Dropout: ratio must have one element");
            cast__ref(r.dtype, DType::f64, r.data, &ratio, 1);
        }
        if (t.numel >= 1 && t.as<uint8_t>()[0] != 0 && ratio != 0) {
            return Status::error(StatusCode::unsupported,
                                 "failed to run Dropout: training mode is not supported (ratio=%g)", ratio);
        }
    }
    if (x.data != y.data && x.numel > 0)
        std::memcpy(y.data, x.data, static_cast<size_t>(x.numel) * dtype_size(x.dtype));
    if (call.n_out > 1 && call.out[1].present()) {
        const TensorView& m = call.out[1];
        FLEXPIPE_RETURN_IF_ERROR(check_tensor(m, call.name, "mask"));
        if (m.numel != x.numel) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run Dropout: mask has %lld elements, input %lld",
                                 static_cast<long long>(m.numel), static_cast<long long>(x.numel));
        }
        const size_t size = dtype_size(m.dtype);
        alignas(8) unsigned char one[8];
        const double v = 1;
        cast__ref(DType::f64, m.dtype, &v, one, 1);
        unsigned char* dst = static_cast<unsigned char*>(m.data);
        for (int64_t i = 0; i < m.numel; ++i) std::memcpy(dst + static_cast<size_t>(i) * size, one, size);
    }
    return Status::ok();
}

}  // namespace flexpipe
