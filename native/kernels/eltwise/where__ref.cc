// SPDX-License-Identifier: Apache-2.0
// Where (select by a bool condition) on rows of 1-, 2-, 4- or 8-byte elements (scalar reference).
#include <cstring>

#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

namespace {

template <typename T>
void where_row(const uint8_t* c, int64_t sc, const T* x, int64_t sx, const T* y, int64_t sy, T* out,
               int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
}

}  // namespace

void where__ref(int64_t elem_size, const uint8_t* c, int64_t sc, const void* x, int64_t sx, const void* y,
                int64_t sy, void* out, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    auto run = [&](auto v) {  // elements as unsigned integers of elem_size bytes
        using T = decltype(v);
        where_row(c, sc, static_cast<const T*>(x), sx, static_cast<const T*>(y), sy, static_cast<T*>(out), n);
    };
    switch (elem_size) {
        case 1: return run(uint8_t{});
        case 2: return run(uint16_t{});
        case 4: return run(uint32_t{});
        case 8: return run(uint64_t{});
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace flexpipe
