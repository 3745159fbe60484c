// SPDX-License-Identifier: Apache-2.0
// Checks the elementwise op drivers share (op declarations are in runtime/ops/ops.h).
#pragma once

#include "common/status.h"
#include "kernels/eltwise/eltwise.h"
#include "runtime/op_call.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"

namespace flexpipe {

// Which ops a dtype supports (eltwise_support.cc); checked before dispatching to a kernel.
bool unary_supported(DType t, UnaryOp op);
bool binary_supported(DType t, BinaryOp op);
// Every dtype in common/dtype.h except undefined (bool included).
bool eltwise_dtype_known(DType t);

// A tensor the op reads or writes: known dtype, rank within max_rank, non-negative dims whose
// product is numel, and data present when numel > 0.
inline Status check_tensor(const TensorView& t, const char* op, const char* what) {
    if (!eltwise_dtype_known(t.dtype)) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: %s has no known dtype (dtype=%d)", op, what,
                             static_cast<int>(t.dtype));
    }
    if (t.rank < 0 || t.rank > max_rank) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: %s rank out of range (rank=%d)",
                             op, what, t.rank);
    }
    int64_t n = 1;
    for (int i = 0; i < t.rank; ++i) {
        if (t.dims[i] < 0) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run %s: %s has a negative dim (dim=%lld)", op, what,
                                 static_cast<long long>(t.dims[i]));
        }
        n *= t.dims[i];
    }
    if (n != t.numel) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: %s numel disagrees with dims (numel=%lld)", op, what,
                             static_cast<long long>(t.numel));
    }
    if (n > 0 && t.data == nullptr) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: %s has no data", op, what);
    }
    return Status::ok();
}

// check_tensor for every tensor listed: check_tensors(op, {{a, "a"}, {y, "output"}}).
inline Status check_tensors(const char* op, std::initializer_list<Named> tensors) {
    for (const Named& n : tensors) FLEXPIPE_RETURN_IF_ERROR(check_tensor(n.t, op, n.what));
    return Status::ok();
}

// Same dtype and same number of elements (unary ops: output dims were set by the plan).
inline Status check_same_layout(const TensorView& x, const TensorView& y, const char* op) {
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, op));
    if (x.numel != y.numel) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: output has %lld elements, input %lld", op,
                             static_cast<long long>(y.numel), static_cast<long long>(x.numel));
    }
    return Status::ok();
}

}  // namespace flexpipe
