// SPDX-License-Identifier: Apache-2.0
// Broadcasting elementwise ops (the Binary family with variadic Sum/Max/Min/Mean, Compare, Pow, Where) and
// Cast.
#include <cstring>

#include "runtime/dispatch.h"
#include "runtime/ops/eltwise_broadcast.h"
#include "runtime/ops/eltwise_ops.h"

namespace flexpipe {

namespace {

bool is_float_dtype(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::f16; }

// One row of the Binary family; element pointers already offset.
void binary_row(DType t, BinaryOp op, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                int64_t n) {
    switch (t) {
        case DType::f32:
            return kernels().eltwise.binary_f32(op, static_cast<const float*>(a), sa,
                                                static_cast<const float*>(b), sb, static_cast<float*>(y), n);
        case DType::f64:
            return binary_f64__ref(op, static_cast<const double*>(a), sa, static_cast<const double*>(b), sb,
                                   static_cast<double*>(y), n);
        case DType::f16:
            return binary_f16__ref(op, static_cast<const Half*>(a), sa, static_cast<const Half*>(b), sb,
                                   static_cast<Half*>(y), n);
        default: return binary_int__ref(t, op, a, sa, b, sb, y, n);
    }
}

const char* at(const TensorView& t, int64_t elem, int64_t size) {
    return static_cast<const char*>(t.data) + elem * size;
}

Status not_broadcastable(const char* op, const TensorView& in, int k, const TensorView& out) {
    return Status::error(
        StatusCode::shape_mismatch,
        "failed to run %s: input %d (rank %d) does not broadcast to the output (rank %d, numel %lld)", op, k,
        in.rank, out.rank, static_cast<long long>(out.numel));
}

// Plans a broadcast of ins[0..n) to out, with a shape_mismatch status naming the culprit.
Status plan(const char* op, const TensorView* const* ins, int n, const TensorView& out, Broadcast& b) {
    if (broadcast_plan(ins, n, out, b)) return Status::ok();
    for (int k = 0; k < n; ++k) {
        Broadcast one;
        if (!broadcast_plan(&ins[k], 1, out, one)) return not_broadcastable(op, *ins[k], k, out);
    }
    return not_broadcastable(op, *ins[0], 0, out);
}

// The output dims must be exactly the numpy broadcast of the inputs' dims (not merely a shape they
// broadcast to), so a wrong plan cannot make the op write more than it computes.
Status check_out_dims(const char* op, const TensorView* ins, int n, const TensorView& out) {
    int rank = 0;
    for (int k = 0; k < n; ++k) rank = ins[k].rank > rank ? ins[k].rank : rank;
    bool ok = out.rank == rank;
    for (int i = 0; i < rank && ok; ++i) {
        int64_t want = 1;
        for (int k = 0; k < n; ++k) {
            const int j = i - (rank - ins[k].rank);
            if (j >= 0 && ins[k].dims[j] != 1) want = ins[k].dims[j];
        }
        ok = out.dims[i] == want;
    }
    if (ok) return Status::ok();
    return Status::error(
        StatusCode::shape_mismatch,
        "failed to run %s: output dims are not the broadcast of the inputs (rank=%d, numel=%lld)", op,
        out.rank, static_cast<long long>(out.numel));
}

// Broadcasts ins[0..N) to out and calls row(off, stride, pos, n) for each run of n outputs from pos:
// input k's elements there start at off[k] and step by stride[k].
template <int N, class Row>
Status run_broadcast(const OpCall& call, const TensorView* const (&ins)[N],
                     const TensorView& out, Row&& row) {
    Broadcast bp;
    FLEXPIPE_RETURN_IF_ERROR(plan(call.name, ins, N, out, bp));
    int64_t stride[N];
    for (int k = 0; k < N; ++k) stride[k] = bp.inner_stride(k);
    broadcast_run(bp, out.numel, call.threads,
                  [&](const int64_t* off, int64_t pos, int64_t n) { row(off, stride, pos, n); });
    return Status::ok();
}

// out = a (op) b with broadcasting; a or b may be out itself (then with out's dims).
Status binary_step(const OpCall& call, BinaryOp op, const TensorView& a,
                   const TensorView& b, const TensorView& out) {
    const int64_t size = static_cast<int64_t>(dtype_size(out.dtype));
    return run_broadcast<2>(call, {&a, &b}, out,
                            [&](const int64_t* off, const int64_t* s, int64_t pos, int64_t n) {
        binary_row(out.dtype, op, at(a, off[0], size), s[0], at(b, off[1], size), s[1],
                   static_cast<char*>(out.data) + pos * size, n);
    });
}

}  // namespace

// Binary: y = in0 (op) in1 (op) in2 ..., folded left with numpy broadcasting at every step (Add, Sub,
// Mul, Div, same-dtype Pow, Mod, Max, Min, Sum, Mean, PRelu, BitShift, And, Or, Xor).
// inputs: 1..n tensors of y's dtype, each broadcastable to y's dims; bool only for bit_and/or/xor.
// outputs: y.
// ints: [op, mean] — op is a BinaryOp code (kernels/eltwise/eltwise.h); mean = 1 divides the result by
//   the number of inputs (float dtypes only). floats: none.
// With one input, y = in0 (same element count).
Status op_binary(const OpCall& call) {
    const TensorView& y = call.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_tensor(y, call.name, "output"));
    for (int k = 0; k < call.n_in; ++k) {
        FLEXPIPE_RETURN_IF_ERROR(check_tensor(call.in[k], call.name, "input"));
        FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(call.in[k], y, call.name));
    }
    const int64_t code = call.ints[0];
    const BinaryOp op = static_cast<BinaryOp>(code);
    const bool mean = call.int_at(1, 0) != 0;
    if (code < 0 || code >= static_cast<int64_t>(BinaryOp::count) || !binary_supported(y.dtype, op) ||
        (mean && !is_float_dtype(y.dtype))) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run Binary: op %lld is not defined for %s",
                             static_cast<long long>(code), dtype_name(y.dtype));
    }
    FLEXPIPE_RETURN_IF_ERROR(check_out_dims(call.name, call.in, call.n_in, y));
    if (call.n_in == 1) {
        FLEXPIPE_RETURN_IF_ERROR(check_same_layout(call.in[0], y, call.name));
        if (y.numel > 0 && y.data != call.in[0].data) {
            std::memcpy(y.data, call.in[0].data, static_cast<size_t>(y.numel) * dtype_size(y.dtype));
        }
        return Status::ok();
    }
    FLEXPIPE_RETURN_IF_ERROR(binary_step(call, op, call.in[0], call.in[1], y));
    for (int k = 2; k < call.n_in; ++k)
        FLEXPIPE_RETURN_IF_ERROR(binary_step(call, op, y, call.in[k], y));
    if (mean) {
        alignas(8) unsigned char count[8];
        const double n_in = call.n_in;
        cast__ref(DType::f64, y.dtype, &n_in, count, 1);
        const int64_t size = static_cast<int64_t>(dtype_size(y.dtype));
        dense_run(y.numel, call.threads, [&](int64_t b, int64_t e) {
            char* p = static_cast<char*>(y.data) + b * size;
            binary_row(y.dtype, BinaryOp::div, p, 1, count, 0, p, e - b);
        });
    }
    return Status::ok();
}

// Compare: y = a (op) b with numpy broadcasting (Equal, Less, Greater, LessOrEqual, GreaterOrEqual).
// inputs: a, b of one dtype (any, bool included). outputs: y (bool).
// ints: [op] — a CompareOp code. floats: none.
Status op_compare(const OpCall& call) {
    const TensorView& a = call.in[0];
    const TensorView& b = call.in[1];
    const TensorView& y = call.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_tensors(call.name, {{a, "a"}, {b, "b"}, {y, "output"}}));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(a, b, call.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::boolean, call.name, "output"));
    const int64_t code = call.ints[0];
    if (code < 0 || code >= static_cast<int64_t>(CompareOp::count)) {
        return Status::error(StatusCode::invalid_argument, "failed to run Compare: unknown op (op=%lld)",
                             static_cast<long long>(code));
    }
    const CompareOp op = static_cast<CompareOp>(code);
    FLEXPIPE_RETURN_IF_ERROR(check_out_dims(call.name, call.in, 2, y));
    const int64_t size = static_cast<int64_t>(dtype_size(a.dtype));
    return run_broadcast<2>(call, {&a, &b}, y,
                            [&](const int64_t* off, const int64_t* s, int64_t pos, int64_t n) {
        compare__ref(a.dtype, op, at(a, off[0], size), s[0], at(b, off[1], size), s[1], y.as<uint8_t>() + pos,
                     n);
    });
}

// Pow: z = x ^ y with numpy broadcasting; z has x's dtype; y may have any numeric dtype.
// inputs: x, y (numeric, not bool). outputs: z (x's dtype). ints: none. floats: none.
// Same dtypes run the Binary pow kernel; mixed dtypes compute in double (integer^integer exactly).
Status op_pow(const OpCall& call) {
    const TensorView& x = call.in[0];
    const TensorView& e = call.in[1];
    const TensorView& z = call.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_tensors(call.name, {{x, "x"}, {e, "y"}, {z, "output"}}));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, z, call.name));
    if (x.dtype == DType::boolean || e.dtype == DType::boolean) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run Pow: operands must be numeric (got bool)");
    }
    FLEXPIPE_RETURN_IF_ERROR(check_out_dims(call.name, call.in, 2, z));
    if (x.dtype == e.dtype) return binary_step(call, BinaryOp::pow, x, e, z);
    const int64_t sx = static_cast<int64_t>(dtype_size(x.dtype));
    const int64_t sy = static_cast<int64_t>(dtype_size(e.dtype));
    return run_broadcast<2>(call, {&x, &e}, z,
                            [&](const int64_t* off, const int64_t* s, int64_t pos, int64_t n) {
        pow__ref(x.dtype, e.dtype, at(x, off[0], sx), s[0], at(e, off[1], sy), s[1],
                 static_cast<char*>(z.data) + pos * sx, n);
    });
}

// Where: out = cond ? x : y with three-way numpy broadcasting.
// inputs: cond (bool), x, y (one dtype, any). outputs: out (x's dtype). ints: none. floats: none.
Status op_where(const OpCall& call) {
    const TensorView& c = call.in[0];
    const TensorView& x = call.in[1];
    const TensorView& y = call.in[2];
    const TensorView& out = call.out[0];
    FLEXPIPE_RETURN_IF_ERROR(
        check_tensors(call.name, {{c, "condition"}, {x, "x"}, {y, "y"}, {out, "output"}}));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c, DType::boolean, call.name, "condition"));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, call.name));
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, out, call.name));
    FLEXPIPE_RETURN_IF_ERROR(check_out_dims(call.name, call.in, 3, out));
    const int64_t size = static_cast<int64_t>(dtype_size(x.dtype));
    return run_broadcast<3>(call, {&c, &x, &y}, out,
                            [&](const int64_t* off, const int64_t* s, int64_t pos, int64_t n) {
        where__ref(size, c.as<uint8_t>() + off[0], s[0], at(x, off[1], size), s[1], at(y, off[2], size), s[2],
                   static_cast<char*>(out.data) + pos * size, n);
    });
}

// Cast: y = (to) x elementwise; float to integer truncates and saturates, to bool is x != 0.
// inputs: x (any dtype). outputs: y (dtype `to`, same element count). ints: [to] (ONNX dtype code,
// must equal y's dtype). floats: none.
Status op_cast(const OpCall& call) {
    const TensorView& x = call.in[0];
    const TensorView& y = call.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_tensors(call.name, {{x, "input"}, {y, "output"}}));
    const int64_t to = call.int_at(0, static_cast<int64_t>(y.dtype));
    if (to != static_cast<int64_t>(y.dtype)) {
        return Status::error(StatusCode::invalid_argument, "failed to run Cast: output is %s but to=%lld",
                             dtype_name(y.dtype), static_cast<long long>(to));
    }
    if (x.numel != y.numel) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Cast: output has %lld elements, input %lld",
                             static_cast<long long>(y.numel), static_cast<long long>(x.numel));
    }
    const int64_t sx = static_cast<int64_t>(dtype_size(x.dtype));
    const int64_t sy = static_cast<int64_t>(dtype_size(y.dtype));
    dense_run(x.numel, call.threads, [&](int64_t b, int64_t e) {
        cast__ref(x.dtype, y.dtype, at(x, b, sx), static_cast<char*>(y.data) + b * sy, e - b);
    });
    return Status::ok();
}

}  // namespace flexpipe
