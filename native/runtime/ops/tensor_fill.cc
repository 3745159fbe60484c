// SPDX-License-Identifier: Apache-2.0
// Ops that write patterns: Pad, Trilu, Fill (ConstantOfShape), Range, EyeLike.
#include <cmath>

#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

namespace tensor_ops {

namespace {

// IEEE binary16 bits of f, round to nearest even (storage-only dtype: used for fill values).
uint16_t half_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to infinity
    if (abs < 0x38800000u) {                                               // subnormal or zero
        const float a = std::fabs(f) * 16777216.0f;  // 2^24: units of the smallest subnormal
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a)));
    }
    const uint32_t mant = abs & 0x7fffffu;
    uint32_t h = ((abs >> 23) - 112u) << 10 | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
}

template <typename T>
void put(void* out, T v) {
    std::memcpy(out, &v, sizeof(T));
}

}  // namespace

bool scalar_bits(DType t, double f, int64_t i, void* out) {
    switch (t) {
        case DType::f32: put(out, static_cast<float>(f)); return true;
        case DType::f64: put(out, f); return true;
        case DType::f16: put(out, half_bits(static_cast<float>(f))); return true;
        case DType::u8: put(out, static_cast<uint8_t>(i)); return true;
        case DType::i8: put(out, static_cast<int8_t>(i)); return true;
        case DType::u16: put(out, static_cast<uint16_t>(i)); return true;
        case DType::i16: put(out, static_cast<int16_t>(i)); return true;
        case DType::i32: put(out, static_cast<int32_t>(i)); return true;
        case DType::u32: put(out, static_cast<uint32_t>(i)); return true;
        case DType::i64: put(out, i); return true;
        case DType::u64: put(out, static_cast<uint64_t>(i)); return true;
        case DType::boolean: put(out, static_cast<uint8_t>(i != 0)); return true;
        default: return false;
    }
}

}  // namespace tensor_ops

using tensor_ops::check_elem_size;

// Pad. in: data, value (optional: a tensor of data's dtype whose first element is the constant;
// when absent floats[0] is converted to data's dtype). out: y (same rank,
// y.dims[k] = data.dims[k] + pads_begin[k] + pads_end[k]).
// ints: [mode (0 constant, 1 reflect, 2 edge, 3 wrap), pads_begin[0..r), pads_end[0..r)].
// floats: [constant value] (optional, default 0).
static Status pad(const OpCall& c, const TensorView& x, const TensorView& y) {
    FLEXPIPE_CHECK_ARG(
        x.rank >= 1 && y.rank == x.rank && c.n_ints == 1 + 2 * x.rank,
        "failed to run Pad: expected rank >= 1, equal ranks and %d ints (got rank %d and %d, %d ints)",
        1 + 2 * x.rank, x.rank, y.rank, c.n_ints);
    const int64_t mode = c.ints[0];
    FLEXPIPE_CHECK_ARG(mode >= 0 && mode <= 3, "failed to run Pad: unknown mode (mode=%lld)",
                       static_cast<long long>(mode));
    const int64_t* pads = c.ints + 1;
    for (int k = 0; k < x.rank; ++k) {
        FLEXPIPE_CHECK_ARG(y.dims[k] == x.dims[k] + pads[k] + pads[x.rank + k],
                           "failed to run Pad: output dim %d is %lld, expected %lld", k,
                           static_cast<long long>(y.dims[k]),
                           static_cast<long long>(x.dims[k] + pads[k] + pads[x.rank + k]));
        FLEXPIPE_CHECK_ARG(mode == 0 || x.dims[k] > 0 || y.dims[k] == 0,
                           "failed to run Pad: cannot pad an empty axis in mode %lld (axis=%d)",
                           static_cast<long long>(mode), k);
    }
    uint64_t value = 0;
    if (c.n_in > 1 && c.in[1].present()) {
        FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(c.in[1], x, c.name));
        FLEXPIPE_CHECK_ARG(c.in[1].numel >= 1 && c.in[1].data != nullptr,
                           "failed to run Pad: constant value tensor is empty");
        std::memcpy(&value, c.in[1].data, dtype_size(x.dtype));
    } else {
        const double f = c.float_at(0, 0.0);
        FLEXPIPE_CHECK_ARG(tensor_ops::scalar_bits(x.dtype, f, static_cast<int64_t>(f), &value),
                           "failed to run Pad: unsupported dtype %s", dtype_name(x.dtype));
    }
    if (y.numel == 0) return Status::ok();
    const int64_t rows = y.numel / y.dims[y.rank - 1];
    const size_t es = dtype_size(x.dtype);
    parallel_for(rows, tensor_ops::threads_for(c, y.numel), [&](int64_t begin, int64_t end) {
        pad__ref(y.data, x.data, es, x.rank, x.dims, y.dims, pads, static_cast<PadMode>(mode), &value, begin,
                 end);
    });
    return Status::ok();
}
Status op_pad(const OpCall& c) { return tensor_ops::moved_op<pad>(c); }

// Trilu. in: x (rank >= 2), k (optional int32/int64 scalar: when present it overrides ints[1]).
// out: y (same dims). ints: [upper (0/1), k].
static Status trilu(const OpCall& c, const TensorView& x, const TensorView& y) {
    int64_t k = c.ints[1];
    if (c.n_in > 1 && c.in[1].present())
        FLEXPIPE_RETURN_IF_ERROR(tensor_ops::read_scalar_int(c.in[1], c.name, &k));
    FLEXPIPE_CHECK_ARG(x.rank >= 2 && same_dims(x, y),
                       "failed to run Trilu: expected rank >= 2 and equal dims (rank=%d)", x.rank);
    if (y.numel == 0) return Status::ok();
    const int64_t rows = x.dims[x.rank - 2];
    const int64_t cols = x.dims[x.rank - 1];
    const int64_t mats = x.numel / (rows * cols);
    parallel_for(mats, tensor_ops::threads_for(c, x.numel), [&](int64_t begin, int64_t end) {
        trilu__ref(y.data, x.data, dtype_size(x.dtype), rows, cols, c.ints[0] != 0, k, begin, end);
    });
    return Status::ok();
}
Status op_trilu(const OpCall& c) { return tensor_ops::moved_op<trilu>(c); }

// Fill (ConstantOfShape). in: none. out: y (any dims). ints: [value for integer and bool dtypes],
// floats: [value for float dtypes]. Both default to 0.
Status op_fill(const OpCall& c) {
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(y, c.name));
    uint64_t value = 0;
    FLEXPIPE_CHECK_ARG(tensor_ops::scalar_bits(y.dtype, c.float_at(0, 0.0), c.int_at(0, 0), &value),
                       "failed to run Fill: unsupported dtype %s", dtype_name(y.dtype));
    const size_t es = dtype_size(y.dtype);
    parallel_for(y.numel, tensor_ops::threads_for(c, y.numel),
                 [&](int64_t begin, int64_t end) { fill__ref(y.data, &value, es, begin, end); });
    return Status::ok();
}

// Range. in: none. out: y (rank 1, n elements). ints: [start, delta] (integer dtypes),
// floats: [start, delta] (float dtypes). y[i] = start + i * delta.
Status op_range(const OpCall& c) {
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(y, c.name));
    FLEXPIPE_CHECK_ARG(y.rank == 1, "failed to run Range: output must have rank 1 (rank=%d)", y.rank);
    const int64_t n = y.dims[0];
    switch (y.dtype) {
        case DType::f32: range_f32__ref(y.as<float>(), c.float_at(0, 0), c.float_at(1, 1), n); break;
        case DType::f64: range_f64__ref(y.as<double>(), c.float_at(0, 0), c.float_at(1, 1), n); break;
        case DType::i32: range_i32__ref(y.as<int32_t>(), c.int_at(0, 0), c.int_at(1, 1), n); break;
        case DType::i64: range_i64__ref(y.as<int64_t>(), c.int_at(0, 0), c.int_at(1, 1), n); break;
        case DType::i16: range_i16__ref(y.as<int16_t>(), c.int_at(0, 0), c.int_at(1, 1), n); break;
        default:
            return Status::error(StatusCode::unsupported, "failed to run Range: unsupported dtype %s",
                                 dtype_name(y.dtype));
    }
    return Status::ok();
}

// EyeLike. in: none (only the output dims matter). out: y (rank 2). ints: [k]: ones where
// column - row == k, zeros elsewhere.
Status op_eye_like(const OpCall& c) {
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(check_elem_size(y, c.name));
    FLEXPIPE_CHECK_ARG(y.rank == 2, "failed to run EyeLike: output must have rank 2 (rank=%d)", y.rank);
    uint64_t zero = 0;
    uint64_t one = 0;
    FLEXPIPE_CHECK_ARG(tensor_ops::scalar_bits(y.dtype, 1.0, 1, &one),
                       "failed to run EyeLike: unsupported dtype %s", dtype_name(y.dtype));
    const size_t es = dtype_size(y.dtype);
    fill__ref(y.data, &zero, es, 0, y.numel);
    const int64_t k = c.int_at(0, 0);
    for (int64_t i = 0; i < y.dims[0]; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < y.dims[1]) fill__ref(y.data, &one, es, i * y.dims[1] + j, i * y.dims[1] + j + 1);
    }
    return Status::ok();
}

}  // namespace flexpipe
