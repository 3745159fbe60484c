// SPDX-License-Identifier: Apache-2.0
// Reference strided copy, row copy and fill, by element size (the bits are moved, never read as numbers).
#include <cstring>

#include "common/macros.h"
#include "kernels/copy/copy.h"

namespace flexpipe {

namespace {

template <typename T>
void copy_strided_t(T* dst, const T* src, int rank, const int64_t* dims, const int64_t* strides,
                    int64_t begin, int64_t end) {
    int64_t coord[copy_max_rank];
    int64_t rest = begin;
    int64_t offset = 0;
    for (int k = rank - 1; k >= 0; --k) {
        coord[k] = rest % dims[k];
        rest /= dims[k];
        offset += coord[k] * strides[k];
    }
    const int last = rank - 1;
    const int64_t inner = dims[last];
    const int64_t step = strides[last];
    int64_t pos = begin;
    while (pos < end) {
        int64_t run = inner - coord[last];
        if (run > end - pos) run = end - pos;
        const T* s = src + offset;
        if (step == 1) {
            std::memcpy(dst + pos, s, static_cast<size_t>(run) * sizeof(T));
        } else {
            for (int64_t j = 0; j < run; ++j) dst[pos + j] = s[j * step];
        }
        pos += run;
        offset += run * step;
        coord[last] += run;
        // Carry the odometer: an axis that reached its end goes back to 0 and bumps the next one.
        for (int k = last; k > 0 && coord[k] == dims[k]; --k) {
            offset -= coord[k] * strides[k];
            coord[k] = 0;
            ++coord[k - 1];
            offset += strides[k - 1];
        }
    }
}

template <typename T>
void fill_t(T* dst, const void* value, int64_t begin, int64_t end) {
    T v;
    std::memcpy(&v, value, sizeof(T));
    for (int64_t i = begin; i < end; ++i) dst[i] = v;
}

}  // namespace

void copy_strided__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* dims,
                       const int64_t* src_strides, int64_t begin, int64_t end) {
    FLEXPIPE_DCHECK(rank >= 1 && rank <= copy_max_rank);
    if (begin >= end) return;
    switch (elem_size) {
        case 1:
            return copy_strided_t(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), rank, dims,
                                  src_strides, begin, end);
        case 2:
            return copy_strided_t(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), rank, dims,
                                  src_strides, begin, end);
        case 4:
            return copy_strided_t(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), rank, dims,
                                  src_strides, begin, end);
        default:
            return copy_strided_t(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), rank, dims,
                                  src_strides, begin, end);
    }
}

void copy_rows__ref(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, int64_t rows,
                    size_t row_bytes) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_stride, s + r * src_stride, row_bytes);
}

void fill__ref(void* dst, const void* value, size_t elem_size, int64_t begin, int64_t end) {
    switch (elem_size) {
        case 1: return fill_t(static_cast<uint8_t*>(dst), value, begin, end);
        case 2: return fill_t(static_cast<uint16_t*>(dst), value, begin, end);
        case 4: return fill_t(static_cast<uint32_t*>(dst), value, begin, end);
        default: return fill_t(static_cast<uint64_t*>(dst), value, begin, end);
    }
}

}  // namespace flexpipe
