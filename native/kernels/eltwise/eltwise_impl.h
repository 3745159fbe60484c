// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/eltwise: element traits (float16/bool storage), conversions and row loops
// shared by the __ref files. Not for use outside this directory.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/dtype.h"
#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"

namespace flexpipe {
namespace eltwise_detail {

// IEEE binary16 -> binary32, exact.
inline float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        // zero or subnormal: mant * 2^-24
        const float f = std::ldexp(static_cast<float>(mant), -24);
        return sign ? -f : f;
    }
    if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);  // rebias 15 -> 127
    }
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

// binary32 -> binary16, round to nearest even; overflow gives infinity, NaN stays NaN.
inline uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (ax < 0x38800000u) {
        // below 2^-14: a multiple of 2^-24 (subnormal); a * 2^24 is exact, nearbyint rounds to even
        float a;
        std::memcpy(&a, &ax, sizeof(a));
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
    }
    // normal: drop 13 mantissa bits rounding to nearest even, rebias 127 -> 15
    const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

// Storage type T computes as Elem<T>::C.
template <typename T>
struct Elem {
    using C = T;
    static C load(T v) { return v; }
    static T store(C v) { return v; }
};
template <>
struct Elem<Half> {
    using C = float;
    static float load(Half v) { return half_to_float(v.bits); }
    static Half store(float v) { return Half{float_to_half(v)}; }
};
template <>
struct Elem<Bool8> {
    using C = bool;
    static bool load(Bool8 v) { return v.v != 0; }
    static Bool8 store(bool v) { return Bool8{static_cast<uint8_t>(v ? 1 : 0)}; }
};

// Conversion between compute types: truncating and saturating float -> int (NaN -> 0), != 0 to bool.
template <typename D, typename S>
inline D convert(S v) {
    if constexpr (std::is_same_v<D, bool>) {
        return v != S(0);
    } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
        if (v != v) return D(0);
        if (v <= static_cast<S>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
        if (v >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
        return static_cast<D>(v);
    } else {
        return static_cast<D>(v);
    }
}

// Wrapping integer arithmetic without undefined behaviour (computed in an unsigned type at least as
// wide as unsigned int, so small types do not promote to signed int).
template <typename T>
using Wide = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <typename T>
inline T wrap_add(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
}
template <typename T>
inline T wrap_sub(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
}
template <typename T>
inline T wrap_mul(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
}
template <typename T>
inline T wrap_neg(T a) {
    return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a));
}

template <typename T>
inline T int_div(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap_neg(a);  // lowest / -1 overflows
    }
    return static_cast<T>(a / b);
}

// C remainder (sign of the dividend).
template <typename T>
inline T int_fmod(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return 0;
    }
    return static_cast<T>(a % b);
}

// Python remainder (sign of the divisor).
template <typename T>
inline T int_mod(T a, T b) {
    T r = int_fmod(a, b);
    if constexpr (std::is_signed_v<T>) {
        if (r != 0 && ((r < 0) != (b < 0))) r = wrap_add(r, b);
    }
    return r;
}

template <typename C>
inline C float_mod(C a, C b) {
    C r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

// base^exp by repeated squaring, wrapping; negative exponents give 1/base^|exp| truncated.
template <typename T>
inline T int_pow(T base, int64_t exp) {
    if (exp < 0) {
        if (base == 1) return 1;
        if constexpr (std::is_signed_v<T>) {
            if (base == T(-1)) return (exp & 1) ? T(-1) : T(1);
        }
        return 0;
    }
    T result = 1;
    while (exp > 0) {
        if (exp & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
        exp >>= 1;
    }
    return result;
}

template <typename T>
inline T int_shl(T a, T b) {
    using U = Wide<T>;
    if (b < 0 || static_cast<uint64_t>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) << b);
}

template <typename T>
inline T int_shr(T a, T b) {
    if (b < 0 || static_cast<uint64_t>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(a >> b);
}

template <typename C>
inline C nan_max(C a, C b) {
    return (a != a || a > b) ? a : b;
}
template <typename C>
inline C nan_min(C a, C b) {
    return (a != a || a < b) ? a : b;
}

// Row loop y[i] = f(x[i]) through the element traits.
template <typename T, typename F>
inline void map1(const T* x, T* y, int64_t n, F f) {
    for (int64_t i = 0; i < n; ++i) y[i] = Elem<T>::store(f(Elem<T>::load(x[i])));
}

// Row loop y[i] = f(a[i*sa], b[i*sb]) with the stride cases split so dense loops vectorize.
template <typename T, typename R, typename F>
inline void map2(const T* a, int64_t sa, const T* b, int64_t sb, R* y, int64_t n, F f) {
    using E = Elem<T>;
    using ER = Elem<R>;
    FLEXPIPE_DCHECK((sa == 0 || sa == 1) && (sb == 0 || sb == 1));
    if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < n; ++i) y[i] = ER::store(f(E::load(a[i]), E::load(b[i])));
    } else if (sa == 0 && sb == 1) {
        const auto av = E::load(a[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = ER::store(f(av, E::load(b[i])));
    } else if (sa == 1) {
        const auto bv = E::load(b[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = ER::store(f(E::load(a[i]), bv));
    } else {
        const R r = ER::store(f(E::load(a[0]), E::load(b[0])));
        for (int64_t i = 0; i < n; ++i) y[i] = r;
    }
}

template <typename T>
struct Tag {
    using type = T;
};

// Calls f(Tag<T>{}) for the storage type of t; returns false for an unknown dtype.
template <typename F>
inline bool visit_dtype(DType t, F&& f) {
    switch (t) {
        case DType::f32: f(Tag<float>{}); return true;
        case DType::f64: f(Tag<double>{}); return true;
        case DType::f16: f(Tag<Half>{}); return true;
        case DType::i8: f(Tag<int8_t>{}); return true;
        case DType::u8: f(Tag<uint8_t>{}); return true;
        case DType::i16: f(Tag<int16_t>{}); return true;
        case DType::u16: f(Tag<uint16_t>{}); return true;
        case DType::i32: f(Tag<int32_t>{}); return true;
        case DType::u32: f(Tag<uint32_t>{}); return true;
        case DType::i64: f(Tag<int64_t>{}); return true;
        case DType::u64: f(Tag<uint64_t>{}); return true;
        case DType::boolean: f(Tag<Bool8>{}); return true;
        default: return false;
    }
}

}  // namespace eltwise_detail
}  // namespace flexpipe
