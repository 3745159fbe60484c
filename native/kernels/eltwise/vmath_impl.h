// SPDX-License-Identifier: Apache-2.0
// Vectorized float32 exp, erf, erfc, tanh, sigmoid and GELU, written once over a vector type (simd/vec.h):
// VecMath<Vec> is Vec plus these functions, for the family templates that need both (eltwise_f32_impl.h,
// attention_impl.h, softmax_impl.h). Internal linkage (anonymous namespace): each ISA file compiles its
// own copy with its own flags (STYLE.md §3).
//
// Every step is one Vec operation with FMA, so all ISAs give the same results bit for bit except where
// the hardware min/max differ on NaN (both keep NaN). Errors, measured exhaustively over every float in the
// stated ranges against double-precision libm, are listed in kernels/eltwise/eltwise.h ("Vector math"). In
// short: exp 0.72 ulp (8.5e-8 relative), erf 1.8e-7, tanh 1.5e-7, sigmoid 1.8e-7 relative.
#pragma once

namespace flexpipe {
namespace {

template <class Vec>
struct VecMath : Vec {
    using V = typename Vec::V;

    // c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1] by Horner's rule: one FMA per coefficient after the first.
    template <int N>
    static V horner(V x, const float (&c)[N]) {
        V p = Vec::set1(c[0]);
        for (int i = 1; i < N; ++i) p = Vec::fma(p, x, Vec::set1(c[i]));
        return p;
    }

    // exp(x) = 2^n * e^r with n = round(x / ln2), r = x - n*ln2 (Cody-Waite, ln2 = hi + lo exactly enough
    // for |n| <= 150), e^r = 1 + r + r^2 * P(r) on |r| <= ln2/2 (P: degree-4 minimax fit, 3e-9 relative).
    // 2^n is applied in two halves (scale_pow2) so that results in the subnormal range and 2^128-ish
    // overflow come out right (0 below -103.97, +inf above 88.72). x second in max_fast/min_fast: NaN stays.
    static V exp(V x) {
        x = Vec::max_fast(Vec::set1(-104.0f), x);
        x = Vec::min_fast(Vec::set1(89.0f), x);
        const V n = Vec::round(Vec::mul(x, Vec::set1(1.44269504f)));
        V r = Vec::fnma(n, Vec::set1(0.693145751953125f), x);
        r = Vec::fnma(n, Vec::set1(1.428606765330187e-06f), r);
        const V p = horner(r, {0.001381461275741458f, 0.008368710055947304f, 0.04166838899254799f,
                               0.1666652113199234f, 0.4999999403953552f});
        const V y = Vec::add(Vec::fma(p, Vec::mul(r, r), r), Vec::set1(1.0f));
        return Vec::scale_pow2(y, n);
    }

    // erf(a) = a * P(a^2) for 0 <= a < 0.9 (P: degree-5 minimax fit, 1.2e-8 relative).
    static V erf_small(V a) {
        const V s = Vec::mul(a, a);
        const V p = horner(s, {-0.000609038514085114f, 0.0050119683146476746f, -0.026778914034366608f,
                               0.11282140761613846f, -0.3761252462863922f, 1.1283791065216064f});
        return Vec::mul(a, p);
    }

    // erfc(a) = exp(-a^2 + R(a)) for 0.9 <= a <= 3.92, R(a) = log(erfc(a)) + a^2 a degree-8 polynomial in
    // (a - 2.4) (minimax, 8e-9 absolute); a^2 enters exactly as hi + lo (the FMA residual). Past 3.92 the
    // value is that of 3.92 (erf rounds to 1 there); callers that need the tail mask it.
    static V erfc_large(V a) {
        const V ac = Vec::min_fast(Vec::set1(3.92f), a);
        const V u = Vec::sub(ac, Vec::set1(2.4f));
        const V q = horner(u, {1.6325312799381209e-06f, -1.4584851669496857e-05f, 8.708296081749722e-05f,
                               -0.0004695235984399915f, 0.0023874251637607813f, -0.011768133379518986f,
                               0.059498101472854614f, -0.36423659324645996f, -1.520975112915039f});
        const V s_hi = Vec::mul(ac, ac);
        const V s_lo = Vec::fms(ac, ac, s_hi);  // ac * ac - s_hi, exact
        return exp(Vec::sub(Vec::sub(q, s_lo), s_hi));
    }

    // erf(x): the small branch below |x| = 0.9, else 1 - erfc(|x|); sign restored.
    static V erf(V x) {
        const V a = Vec::abs(x);
        const V large = Vec::sub(Vec::set1(1.0f), erfc_large(a));
        return Vec::or_sign(Vec::select(Vec::lt(a, Vec::set1(0.9f)), erf_small(a), large), x);
    }

    // tanh(x) = a + a^3 * P(a^2) for a = |x| < 0.6 (P: degree-4 minimax, 2.8e-9 relative), else
    // 1 - 2 / (exp(2a) + 1); sign restored. exp's argument is capped at 19 (tanh rounds to 1 long before).
    static V tanh(V x) {
        const V a = Vec::abs(x);
        const V s = Vec::mul(a, a);
        const V p = horner(s, {-0.005895158741623163f, 0.020795971155166626f, -0.053783830255270004f,
                               0.13331924378871918f, -0.33333298563957214f});
        const V small = Vec::fma(Vec::mul(p, s), a, a);
        const V ac = Vec::min_fast(Vec::set1(9.5f), a);
        const V e = exp(Vec::add(ac, ac));
        const V one = Vec::set1(1.0f);
        const V large = Vec::sub(one, Vec::div(Vec::set1(2.0f), Vec::add(e, one)));
        return Vec::or_sign(Vec::select(Vec::lt(a, Vec::set1(0.6f)), small, large), x);
    }

    // sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) (never overflows).
    static V sigmoid(V x) {
        const V e = exp(Vec::or_sign(x, Vec::set1(-0.0f)));
        const V r = Vec::div(Vec::set1(1.0f), Vec::add(Vec::set1(1.0f), e));
        return Vec::select(Vec::ge(x, Vec::zero()), r, Vec::mul(e, r));
    }

    // gelu(x) = x/2 * (1 + erf(z)), z = x/sqrt(2). For z <= -0.9 the factor is erfc(|z|), computed
    // directly (no cancellation), and 0 past |z| = 3.92 where |gelu| < 8e-8.
    static V gelu(V x) {
        const V z = Vec::mul(Vec::abs(x), Vec::set1(0.70710678118654752f));
        const V h_small = Vec::add(Vec::set1(1.0f), Vec::xor_sign(erf_small(z), x));
        const V c = Vec::zero_if(Vec::gt(z, Vec::set1(3.92f)), erfc_large(z));
        const V h_large = Vec::select(Vec::ge(x, Vec::zero()), Vec::sub(Vec::set1(2.0f), c), c);
        const V h = Vec::select(Vec::lt(z, Vec::set1(0.9f)), h_small, h_large);
        return Vec::mul(Vec::mul(Vec::set1(0.5f), x), h);
    }

    // gelu_tanh(x) = x/2 * (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
    static V gelu_tanh(V x) {
        const V x2 = Vec::mul(x, x);
        const V inner = Vec::fma(Vec::mul(Vec::set1(0.044715f), x2), x, x);
        const V m2u = Vec::mul(inner, Vec::set1(-1.5957691216057308f));  // -2 * sqrt(2/pi)
        return Vec::div(x, Vec::add(Vec::set1(1.0f), exp(m2u)));
    }
};

}  // namespace
}  // namespace flexpipe
