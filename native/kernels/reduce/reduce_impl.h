// SPDX-License-Identifier: Apache-2.0
// The reference reduction templates over the element type; included by reduce__ref.cc (and for
// sum_contiguous by pool_f32__ref.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/reduce/reduce.h"

namespace flexpipe {
namespace reduce_ref {

// Calls fn(x) for each element of the reduced sub-tensor at src (row-major over red_dims).
template <typename T, typename Fn>
void visit(const T* src, const ReduceShape& s, Fn&& fn) {
    if (s.red_rank == 0) {
        fn(src[0]);
        return;
    }
    int64_t coord[8] = {0};
    for (int k = 0; k < s.red_rank; ++k)
        if (s.red_dims[k] == 0) return;
    const int last = s.red_rank - 1;
    const int64_t n = s.red_dims[last];
    const int64_t step = s.red_strides[last];
    int64_t offset = 0;
    for (;;) {
        const T* p = src + offset;
        for (int64_t j = 0; j < n; ++j) fn(p[j * step]);
        int k = last - 1;
        for (; k >= 0; --k) {
            offset += s.red_strides[k];
            if (++coord[k] < s.red_dims[k]) break;
            offset -= coord[k] * s.red_strides[k];
            coord[k] = 0;
        }
        if (k < 0) return;
    }
}

// Start values of max and min: -inf/+inf for floats, the type's limits for integers.
template <typename T, typename Acc>
Acc lowest_start() {
    return std::is_floating_point<T>::value ? Acc(-std::numeric_limits<T>::infinity())
                                            : Acc(std::numeric_limits<T>::lowest());
}

template <typename T, typename Acc>
Acc highest_start() {
    return std::is_floating_point<T>::value ? Acc(std::numeric_limits<T>::infinity())
                                            : Acc(std::numeric_limits<T>::max());
}

// The sum of n contiguous floats in double, in four interleaved partial sums: one chain of dependent
// double adds ran at its latency (4 cycles an element: MnasNet's ReduceMean over 1280 x 7 x 7 took
// 0.060 ms against onnxruntime's 0.016).
inline double sum_contiguous(const float* p, int64_t n) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += p[i];
        a1 += p[i + 1];
        a2 += p[i + 2];
        a3 += p[i + 3];
    }
    for (; i < n; ++i) a0 += p[i];
    return (a0 + a1) + (a2 + a3);
}

// Integer sums and products wrap around (two's complement), as onnxruntime's do: signed overflow would
// be undefined. Floating-point ones are plain.
template <typename A>
A wrap_add(A a, A b) {
    if constexpr (std::is_integral<A>::value) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    return a + b;
}
template <typename A>
A wrap_mul(A a, A b) {
    if constexpr (std::is_integral<A>::value) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    return a * b;
}

// A result computed in double as an element: an integer saturates at its range and NaN gives 0 (the
// conversion of a value out of range, such as log(0) = -inf, is undefined).
template <typename T>
T from_double(double v) {
    if constexpr (std::is_integral<T>::value) {
        if (v != v) return 0;
        if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    }
    return static_cast<T>(v);
}

template <typename T>
T reduce_one(const T* src, const ReduceShape& s, ReduceKind kind) {
    using Acc = typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;
    if constexpr (std::is_same<T, float>::value) {
        // one contiguous run (a global average over trailing axes, after make_reduce_shape's merging)
        if ((kind == ReduceKind::sum || kind == ReduceKind::mean) && s.red_rank == 1 && s.red_strides[0] == 1) {
            const int64_t n = s.red_dims[0];
            const double total = sum_contiguous(src, n);
            return kind == ReduceKind::mean ? (n == 0 ? 0.0f : static_cast<float>(total / static_cast<double>(n)))
                                            : static_cast<float>(total);
        }
    }
    int64_t count = 0;
    Acc acc = 0;
    switch (kind) {
        case ReduceKind::max: {
            Acc m = lowest_start<T, Acc>();
            visit(src, s, [&](T x) { m = (Acc(x) > m || x != x) ? Acc(x) : m; });
            return T(m);
        }
        case ReduceKind::min: {
            Acc m = highest_start<T, Acc>();
            visit(src, s, [&](T x) { m = (Acc(x) < m || x != x) ? Acc(x) : m; });
            return T(m);
        }
        case ReduceKind::prod: {
            Acc p = 1;
            visit(src, s, [&](T x) { p = wrap_mul(p, Acc(x)); });
            return T(p);
        }
        case ReduceKind::log_sum_exp: {
            double m = -std::numeric_limits<double>::infinity();
            visit(src, s, [&](T x) { m = double(x) > m ? double(x) : m; });
            if (std::isinf(m)) return from_double<T>(m);
            double sum = 0;
            visit(src, s, [&](T x) { sum += std::exp(double(x) - m); });
            return from_double<T>(std::log(sum) + m);
        }
        case ReduceKind::l1: visit(src, s, [&](T x) { acc = wrap_add(acc, x < 0 ? wrap_mul(Acc(-1), Acc(x)) : Acc(x)); }); return T(acc);
        case ReduceKind::l2:
        case ReduceKind::sum_square:
            visit(src, s, [&](T x) { acc = wrap_add(acc, wrap_mul(Acc(x), Acc(x))); });
            return kind == ReduceKind::l2 ? from_double<T>(std::sqrt(double(acc))) : T(acc);
        default:
            visit(src, s, [&](T x) {
                acc = wrap_add(acc, Acc(x));
                ++count;
            });
            if (kind == ReduceKind::mean) return count == 0 ? T(0) : T(acc / Acc(count));
            if (kind == ReduceKind::log_sum) return from_double<T>(std::log(double(acc)));
            return T(acc);
    }
}

template <typename T>
void reduce(T* dst, const T* src, const ReduceShape& s, ReduceKind kind, int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
        int64_t rest = o;
        int64_t base = 0;
        for (int k = s.kept_rank - 1; k >= 0; --k) {
            base += (rest % s.kept_dims[k]) * s.kept_strides[k];
            rest /= s.kept_dims[k];
        }
        dst[o] = reduce_one(src + base, s, kind);
    }
}

template <typename T>
void arg_reduce(int64_t* dst, const T* src, int64_t axis_dim, int64_t inner, bool is_min, bool select_last,
                int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
        const T* p = src + (o / inner) * axis_dim * inner + o % inner;
        int64_t best = 0;
        T v = p[0];
        for (int64_t j = 1; j < axis_dim; ++j) {
            const T x = p[j * inner];
            const bool better =
                is_min ? (x < v || (select_last && x == v)) : (x > v || (select_last && x == v));
            if (better || (v != v && x == x)) {
                v = x;
                best = j;
            }
        }
        dst[o] = best;
    }
}

template <typename T>
void cumsum(T* dst, const T* src, int64_t axis_dim, int64_t inner, bool exclusive, bool reverse,
            int64_t begin, int64_t end) {
    using Acc = typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;
    for (int64_t o = begin; o < end; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * axis_dim * inner + i;
            Acc acc = 0;
            for (int64_t step = 0; step < axis_dim; ++step) {
                const int64_t j = reverse ? axis_dim - 1 - step : step;
                const T x = src[base + j * inner];
                if (!exclusive) acc = wrap_add(acc, Acc(x));
                dst[base + j * inner] = T(acc);
                if (exclusive) acc = wrap_add(acc, Acc(x));
            }
        }
    }
}

}  // namespace reduce_ref
}  // namespace flexpipe
