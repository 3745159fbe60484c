// SPDX-License-Identifier: Apache-2.0
// TensorView: a dense row-major tensor living in the arena, as ops see it.
#pragma once

#include <cstdint>

#include "common/dtype.h"

namespace flexpipe {

constexpr int max_rank = 8;

// Dense, row-major (C order), no strides. An absent optional input has data == nullptr and
// dtype == DType::undefined. numel is the product of dims (1 for a scalar, rank 0).
struct TensorView {
    void* data = nullptr;
    DType dtype = DType::undefined;
    int32_t rank = 0;
    int64_t dims[max_rank] = {0};
    int64_t numel = 0;

    bool present() const { return dtype != DType::undefined; }
    template <typename T>
    T* as() const { return static_cast<T*>(data); }
    int64_t dim(int axis) const { return dims[axis]; }
    // Product of dims in [from, to).
    int64_t span(int from, int to) const {
        int64_t n = 1;
        for (int i = from; i < to; ++i) n *= dims[i];
        return n;
    }
};

}  // namespace flexpipe
