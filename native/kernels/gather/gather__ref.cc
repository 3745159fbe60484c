// SPDX-License-Identifier: Apache-2.0
// Reference Gather, GatherElements, GatherND and OneHot (block copies through checked indices).
#include <cstring>

#include "common/macros.h"
#include "kernels/gather/gather.h"

namespace flexpipe {

namespace {

inline int64_t index_at(const void* indices, bool idx64, int64_t i) {
    return idx64 ? static_cast<const int64_t*>(indices)[i] : static_cast<const int32_t*>(indices)[i];
}

inline int64_t wrap_index(int64_t v, int64_t n) {
    return v < 0 ? v + n : v;
}

int64_t one_hot_index(const void* indices, IndexKind kind, int64_t i) {
    switch (kind) {
        case IndexKind::i32: return static_cast<const int32_t*>(indices)[i];
        case IndexKind::i64: return static_cast<const int64_t*>(indices)[i];
        case IndexKind::f32: return static_cast<int64_t>(static_cast<const float*>(indices)[i]);
        default: return static_cast<int64_t>(static_cast<const double*>(indices)[i]);
    }
}

}  // namespace

void gather__ref(void* dst, const void* src, size_t elem_size, int64_t axis_dim, int64_t inner,
                 const void* indices, bool idx64, int64_t n_idx, int64_t begin, int64_t end) {
    const size_t block = static_cast<size_t>(inner) * elem_size;
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    for (int64_t b = begin; b < end; ++b) {
        const int64_t o = b / n_idx;
        const int64_t j = wrap_index(index_at(indices, idx64, b % n_idx), axis_dim);
        FLEXPIPE_DCHECK(j >= 0 && j < axis_dim);
        std::memcpy(d + b * block, s + (o * axis_dim + j) * block, block);
    }
}

void gather_elements__ref(void* dst, const void* src, size_t elem_size, int rank, const int64_t* idx_dims,
                          const int64_t* src_strides, int axis, int64_t axis_dim, const void* indices,
                          bool idx64, int64_t begin, int64_t end) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    for (int64_t i = begin; i < end; ++i) {
        int64_t rest = i;
        int64_t offset = 0;
        for (int k = rank - 1; k >= 0; --k) {
            const int64_t c = rest % idx_dims[k];
            rest /= idx_dims[k];
            const int64_t ck = k == axis ? wrap_index(index_at(indices, idx64, i), axis_dim) : c;
            offset += ck * src_strides[k];
        }
        std::memcpy(d + i * elem_size, s + offset * elem_size, elem_size);
    }
}

void gather_nd__ref(void* dst, const void* src, size_t elem_size, int depth, const int64_t* data_dims,
                    int64_t slice, int64_t n_per_batch, const void* indices, bool idx64, int64_t begin,
                    int64_t end) {
    int64_t batch_elems = slice;
    for (int k = 0; k < depth; ++k) batch_elems *= data_dims[k];
    const size_t block = static_cast<size_t>(slice) * elem_size;
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    for (int64_t q = begin; q < end; ++q) {
        const int64_t batch = q / n_per_batch;
        int64_t offset = 0;
        for (int k = 0; k < depth; ++k) {
            offset =
                offset * data_dims[k] + wrap_index(index_at(indices, idx64, q * depth + k), data_dims[k]);
        }
        std::memcpy(d + q * block, s + (batch * batch_elems + offset * slice) * elem_size, block);
    }
}

void one_hot__ref(void* dst, size_t elem_size, const void* indices, IndexKind kind, int64_t depth,
                  int64_t inner, const void* off_value, const void* on_value, int64_t begin, int64_t end) {
    auto* d = static_cast<uint8_t*>(dst);
    for (int64_t o = begin; o < end; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
            int64_t v = one_hot_index(indices, kind, o * inner + j);
            if (v < 0) v += depth;
            for (int64_t k = 0; k < depth; ++k) {
                const void* value = k == v ? on_value : off_value;
                std::memcpy(d + ((o * depth + k) * inner + j) * elem_size, value, elem_size);
            }
        }
    }
}

namespace {

template <typename T>
void scatter_combine(T* d, const T* u, int64_t n, ScatterReduction r) {
    for (int64_t i = 0; i < n; ++i) {
        switch (r) {
            case ScatterReduction::add: d[i] = static_cast<T>(d[i] + u[i]); break;
            case ScatterReduction::mul: d[i] = static_cast<T>(d[i] * u[i]); break;
            case ScatterReduction::none: d[i] = u[i]; break;
        }
    }
}

}  // namespace

void scatter_nd__ref(void* dst, const void* updates, size_t elem_size, int element, int depth, const int64_t* data_dims,
                     int64_t slice, const void* indices, bool idx64, int64_t blocks, ScatterReduction r) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* u = static_cast<const uint8_t*>(updates);
    const size_t block = static_cast<size_t>(slice) * elem_size;
    for (int64_t q = 0; q < blocks; ++q) {
        int64_t offset = 0;
        for (int k = 0; k < depth; ++k)
            offset = offset * data_dims[k] + wrap_index(index_at(indices, idx64, q * depth + k), data_dims[k]);
        uint8_t* to = d + static_cast<size_t>(offset) * block;
        const uint8_t* from = u + static_cast<size_t>(q) * block;
        if (r == ScatterReduction::none) {
            std::memcpy(to, from, block);
            continue;
        }
        switch (element) {
            case 0: scatter_combine(reinterpret_cast<float*>(to), reinterpret_cast<const float*>(from), slice, r); break;
            case 1: scatter_combine(reinterpret_cast<double*>(to), reinterpret_cast<const double*>(from), slice, r); break;
            case 2: scatter_combine(reinterpret_cast<int32_t*>(to), reinterpret_cast<const int32_t*>(from), slice, r); break;
            default: scatter_combine(reinterpret_cast<int64_t*>(to), reinterpret_cast<const int64_t*>(from), slice, r); break;
        }
    }
}

}  // namespace flexpipe
