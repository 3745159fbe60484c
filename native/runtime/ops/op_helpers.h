// SPDX-License-Identifier: Apache-2.0
// Small checks and index helpers shared by the op drivers in runtime/ops/.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "common/status.h"
#include "runtime/op_call.h"

namespace flexpipe {

inline Status expect_dtype(const TensorView& t, DType want, const char* op, const char* what) {
    if (t.dtype != want) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: %s must be %s (got %s)", op, what,
                             dtype_name(want), dtype_name(t.dtype));
    }
    return Status::ok();
}

// A tensor and what an error message calls it.
struct Named {
    const TensorView& t;
    const char* what;
};

// Every tensor listed is float32: expect_f32(op, {{a, "A"}, {y, "Y"}}).
inline Status expect_f32(const char* op, std::initializer_list<Named> tensors) {
    for (const Named& n : tensors) FLEXPIPE_RETURN_IF_ERROR(expect_dtype(n.t, DType::f32, op, n.what));
    return Status::ok();
}

inline Status expect_same_dtype(const TensorView& a, const TensorView& b, const char* op) {
    if (a.dtype != b.dtype) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: dtypes differ (%s vs %s)", op,
                             dtype_name(a.dtype), dtype_name(b.dtype));
    }
    return Status::ok();
}

inline Status expect_ints(const OpCall& c, int n) {
    if (c.n_ints < n) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: expected %d int attributes (got %d)",
                             c.name, n, c.n_ints);
    }
    return Status::ok();
}

inline bool same_dims(const TensorView& a, const TensorView& b) {
    if (a.rank != b.rank) return false;
    for (int i = 0; i < a.rank; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

// Strides (in elements) of `in` seen through numpy broadcasting to `out`'s rank and dims:
// dims of size 1 (or missing on the left) get stride 0. Returns false if `in` cannot broadcast.
inline bool broadcast_strides(const TensorView& in, const TensorView& out, int64_t* strides) {
    if (in.rank > out.rank) return false;
    const int shift = out.rank - in.rank;
    int64_t stride = 1;
    for (int i = out.rank - 1; i >= 0; --i) {
        if (i < shift) {
            strides[i] = 0;
            continue;
        }
        const int64_t d = in.dims[i - shift];
        if (d == out.dims[i]) {
            strides[i] = d == 1 ? 0 : stride;
        } else if (d == 1) {
            strides[i] = 0;
        } else {
            return false;
        }
        stride *= d;
    }
    return true;
}

// Row-major strides of a dense tensor, in elements.
inline void dense_strides(const TensorView& t, int64_t* strides) {
    int64_t s = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
        strides[i] = s;
        s *= t.dims[i];
    }
}

}  // namespace flexpipe
