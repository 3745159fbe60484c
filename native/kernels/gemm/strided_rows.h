// SPDX-License-Identifier: Apache-2.0
// Eight rows of floats a fixed stride apart, walked in step (the A rows of the AVX-512 GEMM tile, the
// weight rows of the AVX-512 im2col-by-rows block). Eight row pointers crowd the general registers
// next to the other operands and loop counters, and the compiler spilled them inside the inner loop,
// one stack load per broadcast; here every row is base + index * scale from two bases and two
// indexes (x = the stride in bytes, y = 3x):
//   0: q0   1: q0+x   2: q0+2x   3: q0+y   4: q0+4x   5: q1   6: q1+x   7: q1+2x
#pragma once

#include <cstdint>

namespace flexpipe {

struct StridedRows8 {
    const char* q0;
    const char* q1;
    int64_t x, y;

    // Rows first, first + stride, ... (stride in floats).
    StridedRows8(const float* first, int64_t stride)
        : q0(reinterpret_cast<const char*>(first)), q1(q0 + 5 * 4 * stride), x(4 * stride), y(12 * stride) {}

    template <int r>
    __attribute__((always_inline)) const float* row() const {
        static_assert(r >= 0 && r < 8, "eight rows");
        const char* at;
        if constexpr (r == 0) at = q0;
        else if constexpr (r == 1) at = q0 + x;
        else if constexpr (r == 2) at = q0 + 2 * x;
        else if constexpr (r == 3) at = q0 + y;
        else if constexpr (r == 4) at = q0 + 4 * x;
        else if constexpr (r == 5) at = q1;
        else if constexpr (r == 6) at = q1 + x;
        else at = q1 + 2 * x;
        return reinterpret_cast<const float*>(at);
    }
    // Moves every row on by `bytes`.
    __attribute__((always_inline)) void advance(int64_t bytes) { q0 += bytes, q1 += bytes; }
};

}  // namespace flexpipe
