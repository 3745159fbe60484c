// SPDX-License-Identifier: Apache-2.0
// Vectorized float32 exp, erf, erfc, tanh, sigmoid and GELU for NEON (aarch64) translation units only.
//
// Include this header only from *__neon.cc files; every function is `static inline`. Algorithms and
// constants are those of vmath__avx2.h (comments there); both use fused multiply-add, so the two give
// the same results bit for bit except where the hardware min/max/round differ on NaN (both keep NaN).
// Errors: kernels/eltwise/eltwise.h ("Vector math").
#pragma once

#include <arm_neon.h>

#include "kernels/simd/vec_neon.h"

namespace flexpipe {
namespace vmath_neon {

static inline float32x4_t dup(float v) {
    return vdupq_n_f32(v);
}

// Horner step: p * x + c.
static inline float32x4_t fma_pc(float32x4_t p, float32x4_t x, float c) {
    return vfmaq_f32(dup(c), p, x);
}

static inline float32x4_t exp_ps(float32x4_t x) {
    x = vmaxq_f32(x, dup(-104.0f));  // vmax/vmin return NaN for a NaN operand: NaN stays
    x = vminq_f32(x, dup(89.0f));
    const float32x4_t n = vrndnq_f32(vmulq_f32(x, dup(1.44269504f)));
    float32x4_t r = vfmsq_f32(x, n, dup(0.693145751953125f));
    r = vfmsq_f32(r, n, dup(1.428606765330187e-06f));
    float32x4_t p = dup(0.001381461275741458f);
    p = fma_pc(p, r, 0.008368710055947304f);
    p = fma_pc(p, r, 0.04166838899254799f);
    p = fma_pc(p, r, 0.1666652113199234f);
    p = fma_pc(p, r, 0.4999999403953552f);
    const float32x4_t y = vaddq_f32(vfmaq_f32(r, p, vmulq_f32(r, r)), dup(1.0f));
    const int32x4_t ni = vcvtq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(y, s1), s2);
}

static inline uint32x4_t sign_bits(float32x4_t x) {
    return vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
}
static inline float32x4_t with_sign(float32x4_t y, uint32x4_t sign) {
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), sign));
}

static inline float32x4_t erf_small_ps(float32x4_t a) {
    const float32x4_t s = vmulq_f32(a, a);
    float32x4_t p = dup(-0.000609038514085114f);
    p = fma_pc(p, s, 0.0050119683146476746f);
    p = fma_pc(p, s, -0.026778914034366608f);
    p = fma_pc(p, s, 0.11282140761613846f);
    p = fma_pc(p, s, -0.3761252462863922f);
    p = fma_pc(p, s, 1.1283791065216064f);
    return vmulq_f32(a, p);
}

static inline float32x4_t erfc_large_ps(float32x4_t a) {
    const float32x4_t ac = vminq_f32(a, dup(3.92f));
    const float32x4_t u = vsubq_f32(ac, dup(2.4f));
    float32x4_t q = dup(1.6325312799381209e-06f);
    q = fma_pc(q, u, -1.4584851669496857e-05f);
    q = fma_pc(q, u, 8.708296081749722e-05f);
    q = fma_pc(q, u, -0.0004695235984399915f);
    q = fma_pc(q, u, 0.0023874251637607813f);
    q = fma_pc(q, u, -0.011768133379518986f);
    q = fma_pc(q, u, 0.059498101472854614f);
    q = fma_pc(q, u, -0.36423659324645996f);
    q = fma_pc(q, u, -1.520975112915039f);
    const float32x4_t s_hi = vmulq_f32(ac, ac);
    const float32x4_t s_lo = vfmaq_f32(vnegq_f32(s_hi), ac, ac);  // ac*ac - s_hi, exact
    return exp_ps(vsubq_f32(vsubq_f32(q, s_lo), s_hi));
}

static inline float32x4_t erf_ps(float32x4_t x) {
    const float32x4_t a = vabsq_f32(x);
    const float32x4_t small = erf_small_ps(a);
    const float32x4_t large = vsubq_f32(dup(1.0f), erfc_large_ps(a));
    return with_sign(vbslq_f32(vcltq_f32(a, dup(0.9f)), small, large), sign_bits(x));
}

static inline float32x4_t tanh_ps(float32x4_t x) {
    const float32x4_t a = vabsq_f32(x);
    const float32x4_t s = vmulq_f32(a, a);
    float32x4_t p = dup(-0.005895158741623163f);
    p = fma_pc(p, s, 0.020795971155166626f);
    p = fma_pc(p, s, -0.053783830255270004f);
    p = fma_pc(p, s, 0.13331924378871918f);
    p = fma_pc(p, s, -0.33333298563957214f);
    const float32x4_t small = vfmaq_f32(a, vmulq_f32(p, s), a);
    const float32x4_t ac = vminq_f32(a, dup(9.5f));
    const float32x4_t e = exp_ps(vaddq_f32(ac, ac));
    const float32x4_t large = vsubq_f32(dup(1.0f), vdivq_f32(dup(2.0f), vaddq_f32(e, dup(1.0f))));
    return with_sign(vbslq_f32(vcltq_f32(a, dup(0.6f)), small, large), sign_bits(x));
}

static inline float32x4_t sigmoid_ps(float32x4_t x) {
    const float32x4_t e = exp_ps(vnegq_f32(vabsq_f32(x)));
    const float32x4_t r = vdivq_f32(dup(1.0f), vaddq_f32(dup(1.0f), e));
    return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), r, vmulq_f32(e, r));
}

static inline float32x4_t gelu_ps(float32x4_t x) {
    const float32x4_t one = dup(1.0f);
    const float32x4_t z = vmulq_f32(vabsq_f32(x), dup(0.70710678118654752f));
    const float32x4_t e = erf_small_ps(z);
    const float32x4_t h_small =
        vaddq_f32(one, vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(e), sign_bits(x))));
    float32x4_t c = erfc_large_ps(z);
    c = vbslq_f32(vcgtq_f32(z, dup(3.92f)), vdupq_n_f32(0.0f), c);
    const float32x4_t h_large = vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), vsubq_f32(dup(2.0f), c), c);
    const float32x4_t h = vbslq_f32(vcltq_f32(z, dup(0.9f)), h_small, h_large);
    return vmulq_f32(vmulq_f32(dup(0.5f), x), h);
}

static inline float32x4_t gelu_tanh_ps(float32x4_t x) {
    const float32x4_t x2 = vmulq_f32(x, x);
    const float32x4_t inner = vfmaq_f32(x, vmulq_f32(dup(0.044715f), x2), x);
    const float32x4_t m2u = vmulq_f32(inner, dup(-1.5957691216057308f));
    return vdivq_f32(x, vaddq_f32(dup(1.0f), exp_ps(m2u)));
}

}  // namespace vmath_neon

namespace {

// VecNeon with this header's functions, for the family templates that need both (eltwise_f32_impl.h, ...).
struct VecMathNeon : VecNeon {
    static V exp(V x) { return vmath_neon::exp_ps(x); }
    static V erf(V x) { return vmath_neon::erf_ps(x); }
    static V tanh(V x) { return vmath_neon::tanh_ps(x); }
    static V sigmoid(V x) { return vmath_neon::sigmoid_ps(x); }
    static V gelu(V x) { return vmath_neon::gelu_ps(x); }
    static V gelu_tanh(V x) { return vmath_neon::gelu_tanh_ps(x); }
};

}  // namespace
}  // namespace flexpipe
