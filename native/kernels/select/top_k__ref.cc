// SPDX-License-Identifier: Apache-2.0
// TopK: a partial sort of each line's indices (select.h).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/select/select.h"

namespace flexpipe {

namespace {

// a ranks above b: NaN above every number, then by value.
template <typename T>
bool ranks_above(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
    }
    return a > b;
}

template <typename T>
void top_k(T* values, int64_t* indices, const T* src, int64_t outer, int64_t n, int64_t inner, int64_t k,
           bool largest, int64_t* idx) {
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            const T* line = src + o * n * inner + i;
            for (int64_t j = 0; j < n; ++j) idx[j] = j;
            // a strict weak order: better value first, the lower index on ties
            const auto better = [&](int64_t a, int64_t b) {
                const T va = line[a * inner], vb = line[b * inner];
                if (largest ? ranks_above(va, vb) : ranks_above(vb, va)) return true;
                if (largest ? ranks_above(vb, va) : ranks_above(va, vb)) return false;
                return a < b;
            };
            std::partial_sort(idx, idx + k, idx + n, better);
            T* v = values + o * k * inner + i;
            int64_t* x = indices + o * k * inner + i;
            for (int64_t j = 0; j < k; ++j) {
                v[j * inner] = line[idx[j] * inner];
                x[j * inner] = idx[j];
            }
        }
    }
}

}  // namespace

bool top_k_dtype_supported(DType t) {
    return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64;
}

void top_k__ref(DType t, void* values, int64_t* indices, const void* src, int64_t outer, int64_t axis_dim,
                int64_t inner, int64_t k, bool largest, int64_t* scratch) {
    switch (t) {
        case DType::f32:
            return top_k(static_cast<float*>(values), indices, static_cast<const float*>(src), outer, axis_dim, inner,
                         k, largest, scratch);
        case DType::f64:
            return top_k(static_cast<double*>(values), indices, static_cast<const double*>(src), outer, axis_dim,
                         inner, k, largest, scratch);
        case DType::i32:
            return top_k(static_cast<int32_t*>(values), indices, static_cast<const int32_t*>(src), outer, axis_dim,
                         inner, k, largest, scratch);
        default:
            return top_k(static_cast<int64_t*>(values), indices, static_cast<const int64_t*>(src), outer, axis_dim,
                         inner, k, largest, scratch);
    }
}

}  // namespace flexpipe
