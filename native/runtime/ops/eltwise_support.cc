// SPDX-License-Identifier: Apache-2.0
// Which elementwise ops each dtype supports; the runtime asks before it dispatches to a kernel.
#include "runtime/ops/eltwise_ops.h"

namespace flexpipe {

static bool is_float(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::f16; }

bool eltwise_dtype_known(DType t) { return t != DType::undefined && dtype_size(t) != 0; }

bool unary_supported(DType t, UnaryOp op) {
    if (!eltwise_dtype_known(t) || static_cast<int32_t>(op) < 0 || op >= UnaryOp::count) return false;
    if (is_float(t)) return op != UnaryOp::logical_not;
    if (t == DType::boolean) return op == UnaryOp::logical_not || op == UnaryOp::identity;
    return op == UnaryOp::identity || op == UnaryOp::abs || op == UnaryOp::neg || op == UnaryOp::sign ||
           op == UnaryOp::relu;
}

bool binary_supported(DType t, BinaryOp op) {
    if (!eltwise_dtype_known(t) || static_cast<int32_t>(op) < 0 || op >= BinaryOp::count) return false;
    const bool bitwise = op == BinaryOp::bit_and || op == BinaryOp::bit_or || op == BinaryOp::bit_xor;
    if (t == DType::boolean) return bitwise;
    if (is_float(t)) return !bitwise && op != BinaryOp::shl && op != BinaryOp::shr;
    return true;
}

}  // namespace flexpipe
