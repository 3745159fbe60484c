// SPDX-License-Identifier: Apache-2.0
// NonZero: count, then write the coordinates (select.h).
#include <cstring>

#include "kernels/select/select.h"

namespace flexpipe {

namespace {

// Whether element i of src is nonzero: floats by their bits without the sign, others by all bits.
struct NonzeroTest {
    const uint8_t* src;
    size_t size;
    uint64_t mask;  // bits that make an element nonzero

    bool operator()(int64_t i) const {
        uint64_t bits = 0;
        std::memcpy(&bits, src + static_cast<size_t>(i) * size, size);
        return (bits & mask) != 0;
    }
};

NonzeroTest nonzero_test(DType t, const void* src) {
    const size_t size = dtype_size(t);
    uint64_t mask = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
    if (t == DType::f32) mask = 0x7fffffffu;
    if (t == DType::f64) mask = 0x7fffffffffffffffull;
    if (t == DType::f16) mask = 0x7fffu;
    return {static_cast<const uint8_t*>(src), size, mask};
}

}  // namespace

int64_t count_nonzero__ref(DType t, const void* src, int64_t n) {
    const NonzeroTest nonzero = nonzero_test(t, src);
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += nonzero(i) ? 1 : 0;
    return count;
}

void nonzero__ref(DType t, const void* src, const int64_t* dims, int rank, int64_t count, int64_t* dst) {
    const NonzeroTest nonzero = nonzero_test(t, src);
    int64_t n = 1;
    for (int r = 0; r < rank; ++r) n *= dims[r];
    int64_t coord[8] = {0};
    int64_t j = 0;
    for (int64_t i = 0; i < n && j < count; ++i) {
        if (nonzero(i)) {
            for (int r = 0; r < rank; ++r) dst[r * count + j] = coord[r];
            ++j;
        }
        for (int r = rank - 1; r >= 0; --r) {  // the next coordinate, row-major
            if (++coord[r] < dims[r]) break;
            coord[r] = 0;
        }
    }
}

}  // namespace flexpipe
