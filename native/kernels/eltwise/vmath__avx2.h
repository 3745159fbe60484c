// SPDX-License-Identifier: Apache-2.0
// Vectorized float32 exp, erf, erfc, tanh, sigmoid and GELU for AVX2+FMA translation units only.
//
// Include this header only from *__avx2.cc files (compiled with -mavx2 -mfma); every function is
// `static inline`, so no AVX2 copy can be linked into baseline code (STYLE.md §3). The algorithms and
// constants are identical in vmath__neon.h, and their errors, measured exhaustively over every float in
// the stated ranges against double-precision libm, are listed in kernels/eltwise/eltwise.h ("Vector
// math"). In short: exp 0.72 ulp (8.5e-8 relative), erf 1.8e-7, tanh 1.5e-7, sigmoid 1.8e-7 relative.
#pragma once

#include <immintrin.h>

#include "kernels/simd/vec_avx2.h"

namespace flexpipe {
namespace vmath_avx2 {

// exp(x) = 2^n * e^r with n = round(x / ln2), r = x - n*ln2 (Cody-Waite, ln2 = hi + lo exactly enough
// for |n| <= 150), e^r = 1 + r + r^2 * P(r) on |r| <= ln2/2 (P: degree-4 minimax fit, 3e-9 relative).
// 2^n is applied as 2^(n>>1) * 2^(n - (n>>1)) so that results in the subnormal range and 2^128-ish
// overflow come out right (0 below -103.97, +inf above 88.72). NaN stays NaN.
static inline __m256 exp_ps(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);  // maxps returns the 2nd operand for NaN: NaN stays
    x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);
    __m256 p = _mm256_set1_ps(0.001381461275741458f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.008368710055947304f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.04166838899254799f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.1666652113199234f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.4999999403953552f));
    const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

static inline __m256 abs_ps(__m256 x) {
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
static inline __m256 sign_of(__m256 x) {
    return _mm256_and_ps(_mm256_set1_ps(-0.0f), x);
}

// erf(a) = a * P(a^2) for 0 <= a < 0.9 (P: degree-5 minimax fit, 1.2e-8 relative).
static inline __m256 erf_small_ps(__m256 a) {
    const __m256 s = _mm256_mul_ps(a, a);
    __m256 p = _mm256_set1_ps(-0.000609038514085114f);
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.0050119683146476746f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.026778914034366608f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.11282140761613846f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.3761252462863922f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.1283791065216064f));
    return _mm256_mul_ps(a, p);
}

// erfc(a) = exp(-a^2 + R(a)) for 0.9 <= a <= 3.92, R(a) = log(erfc(a)) + a^2 a degree-8 polynomial in
// (a - 2.4) (minimax, 8e-9 absolute); a^2 enters exactly as hi + lo (the FMA residual). Past 3.92 the
// value is that of 3.92 (erf rounds to 1 there); callers that need the tail mask it.
static inline __m256 erfc_large_ps(__m256 a) {
    const __m256 ac = _mm256_min_ps(_mm256_set1_ps(3.92f), a);
    const __m256 u = _mm256_sub_ps(ac, _mm256_set1_ps(2.4f));
    __m256 q = _mm256_set1_ps(1.6325312799381209e-06f);
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(-1.4584851669496857e-05f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(8.708296081749722e-05f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(-0.0004695235984399915f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(0.0023874251637607813f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(-0.011768133379518986f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(0.059498101472854614f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(-0.36423659324645996f));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(-1.520975112915039f));
    const __m256 s_hi = _mm256_mul_ps(ac, ac);
    const __m256 s_lo = _mm256_fmsub_ps(ac, ac, s_hi);
    return exp_ps(_mm256_sub_ps(_mm256_sub_ps(q, s_lo), s_hi));
}

// erf(x): the small branch below |x| = 0.9, else 1 - erfc(|x|); sign restored.
static inline __m256 erf_ps(__m256 x) {
    const __m256 a = abs_ps(x);
    const __m256 small = erf_small_ps(a);
    const __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f), erfc_large_ps(a));
    const __m256 y = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.9f), _CMP_LT_OQ));
    return _mm256_or_ps(y, sign_of(x));
}

// tanh(x) = a + a^3 * P(a^2) for a = |x| < 0.6 (P: degree-4 minimax, 2.8e-9 relative), else
// 1 - 2 / (exp(2a) + 1); sign restored. exp's argument is capped at 19 (tanh rounds to 1 long before).
static inline __m256 tanh_ps(__m256 x) {
    const __m256 a = abs_ps(x);
    const __m256 s = _mm256_mul_ps(a, a);
    __m256 p = _mm256_set1_ps(-0.005895158741623163f);
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.020795971155166626f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.053783830255270004f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(0.13331924378871918f));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-0.33333298563957214f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, s), a, a);
    const __m256 e =
        exp_ps(_mm256_add_ps(_mm256_min_ps(_mm256_set1_ps(9.5f), a), _mm256_min_ps(_mm256_set1_ps(9.5f), a)));
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 large = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
    const __m256 y = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.6f), _CMP_LT_OQ));
    return _mm256_or_ps(y, sign_of(x));
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) (never overflows).
static inline __m256 sigmoid_ps(__m256 x) {
    const __m256 e = exp_ps(_mm256_or_ps(x, _mm256_set1_ps(-0.0f)));
    const __m256 r = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    return _mm256_blendv_ps(_mm256_mul_ps(e, r), r, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}

// gelu(x) = x/2 * (1 + erf(z)), z = x/sqrt(2). For z <= -0.9 the factor is erfc(|z|), computed
// directly (no cancellation), and 0 past |z| = 3.92 where |gelu| < 8e-8.
static inline __m256 gelu_ps(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 z = _mm256_mul_ps(abs_ps(x), _mm256_set1_ps(0.70710678118654752f));
    const __m256 h_small = _mm256_add_ps(one, _mm256_xor_ps(erf_small_ps(z), sign_of(x)));
    __m256 c = erfc_large_ps(z);
    c = _mm256_andnot_ps(_mm256_cmp_ps(z, _mm256_set1_ps(3.92f), _CMP_GT_OQ), c);
    const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    const __m256 h_large = _mm256_blendv_ps(c, _mm256_sub_ps(_mm256_set1_ps(2.0f), c), pos);
    const __m256 h = _mm256_blendv_ps(h_large, h_small, _mm256_cmp_ps(z, _mm256_set1_ps(0.9f), _CMP_LT_OQ));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), h);
}

// gelu_tanh(x) = x/2 * (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
static inline __m256 gelu_tanh_ps(__m256 x) {
    const __m256 x2 = _mm256_mul_ps(x, x);
    const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x2), x, x);
    const __m256 m2u = _mm256_mul_ps(inner, _mm256_set1_ps(-1.5957691216057308f));  // -2 * sqrt(2/pi)
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), exp_ps(m2u)));
}

// Horizontal reductions.
static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float hmax_ps(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Lane mask for the first n (0..8) lanes, for maskload/maskstore tails.
static inline __m256i tail_mask(int64_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

}  // namespace vmath_avx2

namespace {

// VecAvx2 with this header's functions, for the family templates that need both (eltwise_f32_impl.h, ...).
struct VecMathAvx2 : VecAvx2 {
    static V exp(V x) { return vmath_avx2::exp_ps(x); }
    static V erf(V x) { return vmath_avx2::erf_ps(x); }
    static V tanh(V x) { return vmath_avx2::tanh_ps(x); }
    static V sigmoid(V x) { return vmath_avx2::sigmoid_ps(x); }
    static V gelu(V x) { return vmath_avx2::gelu_ps(x); }
    static V gelu_tanh(V x) { return vmath_avx2::gelu_tanh_ps(x); }
};

}  // namespace
}  // namespace flexpipe
