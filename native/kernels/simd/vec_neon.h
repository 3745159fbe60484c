// SPDX-License-Identifier: Apache-2.0
// VecNeon: the vector abstraction (simd/vec.h) over aarch64 NEON, 4 float lanes (include only from
// *__neon.cc files).
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/simd/vec.h"

namespace flexpipe {
namespace {

struct VecNeon {
    using V = float32x4_t;
    using M = uint32x4_t;
    static constexpr int lanes = 4;
    static constexpr bool masked_memory = false;

    static V load(const float* p) { return vld1q_f32(p); }
    static void store(float* p, V v) { vst1q_f32(p, v); }
    static V load1(const float* p) { return vld1q_dup_f32(p); }
    static V set1(float s) { return vdupq_n_f32(s); }
    static V zero() { return vdupq_n_f32(0.0f); }
    // Lane by lane (NEON has no masked memory access).
    static V load_first(const float* p, int64_t n) {
        V v = vdupq_n_f32(0.0f);
        if (n > 0) v = vld1q_lane_f32(p, v, 0);
        if (n > 1) v = vld1q_lane_f32(p + 1, v, 1);
        if (n > 2) v = vld1q_lane_f32(p + 2, v, 2);
        if (n > 3) v = vld1q_lane_f32(p + 3, v, 3);
        return v;
    }
    static void store_first(float* p, int64_t n, V v) {
        if (n > 0) vst1q_lane_f32(p, v, 0);
        if (n > 1) vst1q_lane_f32(p + 1, v, 1);
        if (n > 2) vst1q_lane_f32(p + 2, v, 2);
        if (n > 3) vst1q_lane_f32(p + 3, v, 3);
    }
    template <int N>
    static void store_n(float* p, V v) {
        if constexpr (N >= 2) vst1_f32(p, vget_low_f32(v));
        if constexpr (N % 2) vst1q_lane_f32(p + N - 1, v, N - 1);
    }
    static V load_evens(const float* p) { return vld2q_f32(p).val[0]; }
    static V load_evens_raw(const float* p) { return vld2q_f32(p).val[0]; }
    static void load_taps_s2_raw(const float* p, V (&t)[3]) {
        const float32x4x2_t eo = vld2q_f32(p);
        t[0] = eo.val[0];
        t[1] = eo.val[1];
        t[2] = vld2q_f32(p + 2).val[0];
    }
    static V evens_order(V v) { return v; }
    static V gather(const float* x, const int32_t* idx) {
        V v = vdupq_n_f32(x[idx[0]]);
        v = vld1q_lane_f32(x + idx[1], v, 1);
        v = vld1q_lane_f32(x + idx[2], v, 2);
        return vld1q_lane_f32(x + idx[3], v, 3);
    }
    static V load_strided(const float* p, int64_t s) {
        if (s == 1) return vld1q_f32(p);
        if (s == 2) {  // p[0..3] and p[3..6]: lanes 0, 2 of the first and 1, 3 of the second
            const V a = vld1q_f32(p), b = vld1q_f32(p + 3);
            return vcombine_f32(vget_low_f32(vuzp1q_f32(a, a)), vget_low_f32(vuzp2q_f32(b, b)));
        }
        V v = vdupq_n_f32(p[0]);
        v = vld1q_lane_f32(p + s, v, 1);
        v = vld1q_lane_f32(p + 2 * s, v, 2);
        return vld1q_lane_f32(p + 3 * s, v, 3);
    }

    // vld2q de-interleaves p[0..7]; the third tap is the evens moved on by one lane with p[8] last.
    static void load_taps_s2(const float* p, V (&t)[3]) {
        const float32x4x2_t eo = vld2q_f32(p);
        t[0] = eo.val[0];
        t[1] = eo.val[1];
        t[2] = vextq_f32(eo.val[0], vld1q_dup_f32(p + 8), 1);
    }

    static V add(V a, V b) { return vaddq_f32(a, b); }
    static V sub(V a, V b) { return vsubq_f32(a, b); }
    static V mul(V a, V b) { return vmulq_f32(a, b); }
    static V div(V a, V b) { return vdivq_f32(a, b); }
    static V sqrt(V a) { return vsqrtq_f32(a); }
    static V fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }
    static V fms(V a, V b, V c) { return vfmaq_f32(vnegq_f32(c), a, b); }
    static V fnma(V a, V b, V c) { return vfmsq_f32(c, a, b); }
    static V abs(V a) { return vabsq_f32(a); }
    static V round(V a) { return vrndnq_f32(a); }
    static V or_sign(V y, V x) {
        return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u))));
    }
    static V xor_sign(V y, V x) {
        return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(y), vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u))));
    }
    static V scale_pow2(V y, V n) {
        const int32x4_t ni = vcvtq_s32_f32(n), n1 = vshrq_n_s32(ni, 1), n2 = vsubq_s32(ni, n1);
        const int32x4_t bias = vdupq_n_s32(127);
        const V s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
        const V s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
        return vmulq_f32(vmulq_f32(y, s1), s2);
    }

    static M lt(V a, V b) { return vcltq_f32(a, b); }
    static M gt(V a, V b) { return vcgtq_f32(a, b); }
    static M ge(V a, V b) { return vcgeq_f32(a, b); }
    static M isnan(V a) { return vmvnq_u32(vceqq_f32(a, a)); }
    static M first_lanes(int64_t n) {
        const uint32x4_t lane = {0, 1, 2, 3};
        return vcltq_u32(lane, vdupq_n_u32(static_cast<uint32_t>(n)));
    }
    static V select(M m, V a, V b) { return vbslq_f32(m, a, b); }
    static V zero_if(M m, V a) { return vbslq_f32(m, vdupq_n_f32(0.0f), a); }

    // FMAX/FMIN propagate NaN and order -0 below +0, so the exact forms are compare-and-select.
    static V max(V a, V b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
    static V min(V a, V b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
    static V max_nan(V a, V b) { return vbslq_f32(vorrq_u32(isnan(a), vcgtq_f32(a, b)), a, b); }
    static V min_nan(V a, V b) { return vbslq_f32(vorrq_u32(isnan(a), vcltq_f32(a, b)), a, b); }
    static V max_fast(V a, V b) { return vmaxq_f32(a, b); }
    static V min_fast(V a, V b) { return vminq_f32(a, b); }
    static V clamp(V v, V lo, V hi) {
        v = vbslq_f32(vcltq_f32(v, lo), lo, v);
        return vbslq_f32(vcgtq_f32(v, hi), hi, v);
    }

    static float hsum(V v) { return vaddvq_f32(v); }
    static double hsum_double(V v) { return vaddvq_f64(vaddq_f64(vcvt_f64_f32(vget_low_f32(v)), vcvt_high_f64_f32(v))); }
    using D = float64x2_t;
    static D dzero() { return vdupq_n_f64(0.0); }
    static D dadd(D a, D b) { return vaddq_f64(a, b); }
    static D dadd_low(D d, V v) { return vaddq_f64(d, vcvt_f64_f32(vget_low_f32(v))); }
    static D dadd_high(D d, V v) { return vaddq_f64(d, vcvt_high_f64_f32(v)); }
    static double dsum(D d) { return vaddvq_f64(d); }
    static float hmax(V v) { return vmaxvq_f32(v); }

    // trn1/trn2 on 32-bit lanes, then on 64-bit lanes.
    static void transpose(V (&r)[4]) {
        const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(r[0], r[1]));
        const float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(r[0], r[1]));
        const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(r[2], r[3]));
        const float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(r[2], r[3]));
        r[0] = vreinterpretq_f32_f64(vtrn1q_f64(t0, t2));
        r[1] = vreinterpretq_f32_f64(vtrn1q_f64(t1, t3));
        r[2] = vreinterpretq_f32_f64(vtrn2q_f64(t0, t2));
        r[3] = vreinterpretq_f32_f64(vtrn2q_f64(t1, t3));
    }
};

}  // namespace
}  // namespace flexpipe
