// SPDX-License-Identifier: Apache-2.0
// Reference Pad (constant, reflect, edge, wrap), Trilu and Range kernels.
#include <cstring>

#include "common/macros.h"
#include "kernels/copy/copy.h"

namespace flexpipe {

namespace {

// Input coordinate for output coordinate c - pad on an axis of n elements, or -1 for "constant".
int64_t pad_source(int64_t c, int64_t n, PadMode mode) {
    if (c >= 0 && c < n) return c;
    switch (mode) {
        case PadMode::edge: return c < 0 ? 0 : n - 1;
        case PadMode::wrap: return ((c % n) + n) % n;
        case PadMode::reflect: {
            if (n == 1) return 0;
            // Mirror without repeating the edge: period 2(n-1), second half runs backwards.
            const int64_t period = 2 * (n - 1);
            int64_t m = ((c % period) + period) % period;
            return m < n ? m : period - m;
        }
        default: return -1;
    }
}

template <typename T>
void pad_t(T* dst, const T* src, int rank, const int64_t* in_dims, const int64_t* out_dims,
           const int64_t* pads, PadMode mode, T value, int64_t row_begin, int64_t row_end) {
    const int last = rank - 1;
    const int64_t out_w = out_dims[last];
    const int64_t in_w = in_dims[last];
    for (int64_t row = row_begin; row < row_end; ++row) {
        T* d = dst + row * out_w;
        // Map the row's outer coordinates to an input row, or decide the whole row is constant.
        int64_t rest = row;
        int64_t src_row = 0;
        int64_t src_stride = 1;
        bool constant_row = false;
        for (int k = last - 1; k >= 0; --k) {
            const int64_t c = rest % out_dims[k];
            rest /= out_dims[k];
            const int64_t s = pad_source(c - pads[k], in_dims[k], mode);
            if (s < 0) constant_row = true;
            src_row += s * src_stride;
            src_stride *= in_dims[k];
        }
        if (constant_row) {
            for (int64_t j = 0; j < out_w; ++j) d[j] = value;
            continue;
        }
        const T* s = src + src_row * in_w;
        for (int64_t j = 0; j < out_w; ++j) {
            const int64_t c = pad_source(j - pads[last], in_w, mode);
            d[j] = c < 0 ? value : s[c];
        }
    }
}

template <typename T>
void pad_dispatch(void* dst, const void* src, int rank, const int64_t* in_dims, const int64_t* out_dims,
                  const int64_t* pads, PadMode mode, const void* value, int64_t row_begin, int64_t row_end) {
    T v;
    std::memcpy(&v, value, sizeof(T));
    pad_t(static_cast<T*>(dst), static_cast<const T*>(src), rank, in_dims, out_dims, pads, mode, v, row_begin,
          row_end);
}

template <typename T>
void trilu_t(T* dst, const T* src, int64_t rows, int64_t cols, bool upper, int64_t k, int64_t m_begin,
             int64_t m_end) {
    for (int64_t m = m_begin; m < m_end; ++m) {
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t base = (m * rows + i) * cols;
            for (int64_t j = 0; j < cols; ++j) {
                const bool keep = upper ? j - i >= k : j - i <= k;
                dst[base + j] = keep ? src[base + j] : T(0);
            }
        }
    }
}

}  // namespace

void pad__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* in_dims,
              const int64_t* out_dims, const int64_t* pads_begin, PadMode mode, const void* value,
              int64_t row_begin, int64_t row_end) {
    FLEXPIPE_DCHECK(rank >= 1);
    switch (elem_size) {
        case 1:
            return pad_dispatch<uint8_t>(dst, src, rank, in_dims, out_dims, pads_begin, mode, value,
                                         row_begin, row_end);
        case 2:
            return pad_dispatch<uint16_t>(dst, src, rank, in_dims, out_dims, pads_begin, mode, value,
                                          row_begin, row_end);
        case 4:
            return pad_dispatch<uint32_t>(dst, src, rank, in_dims, out_dims, pads_begin, mode, value,
                                          row_begin, row_end);
        default:
            return pad_dispatch<uint64_t>(dst, src, rank, in_dims, out_dims, pads_begin, mode, value,
                                          row_begin, row_end);
    }
}

void trilu__ref(void* dst, const void* src, size_t elem_size, int64_t rows, int64_t cols, bool upper,
                int64_t k, int64_t m_begin, int64_t m_end) {
    switch (elem_size) {
        case 1:
            return trilu_t(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), rows, cols, upper, k,
                           m_begin, m_end);
        case 2:
            return trilu_t(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), rows, cols, upper,
                           k, m_begin, m_end);
        case 4:
            return trilu_t(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), rows, cols, upper,
                           k, m_begin, m_end);
        default:
            return trilu_t(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), rows, cols, upper,
                           k, m_begin, m_end);
    }
}

void range_f32__ref(float* dst, double start, double delta, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(start + static_cast<double>(i) * delta);
}

void range_f64__ref(double* dst, double start, double delta, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = start + static_cast<double>(i) * delta;
}

void range_i32__ref(int32_t* dst, int64_t start, int64_t delta, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int32_t>(start + i * delta);
}

void range_i64__ref(int64_t* dst, int64_t start, int64_t delta, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = start + i * delta;
}

void range_i16__ref(int16_t* dst, int64_t start, int64_t delta, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int16_t>(start + i * delta);
}

}  // namespace flexpipe
