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
    static V load_first(const float* p, int64_t n) {
        float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t i = 0; i < n; ++i) b[i] = p[i];
        return vld1q_f32(b);
    }
    static void store_first(float* p, int64_t n, V v) {
        float b[4];
        vst1q_f32(b, v);
        for (int64_t i = 0; i < n; ++i) p[i] = b[i];
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

    static M lt(V a, V b) { return vcltq_f32(a, b); }
    static M gt(V a, V b) { return vcgtq_f32(a, b); }
    static M ge(V a, V b) { return vcgeq_f32(a, b); }
    static M isnan(V a) { return vmvnq_u32(vceqq_f32(a, a)); }
    static V select(M m, V a, V b) { return vbslq_f32(m, a, b); }
    static V zero_if(M m, V a) { return vbslq_f32(m, vdupq_n_f32(0.0f), a); }

    // FMAX/FMIN propagate NaN and order -0 below +0, so the exact forms are compare-and-select.
    static V max(V a, V b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
    static V min(V a, V b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
    static V max_nan(V a, V b) { return vbslq_f32(vorrq_u32(isnan(a), vcgtq_f32(a, b)), a, b); }
    static V min_nan(V a, V b) { return vbslq_f32(vorrq_u32(isnan(a), vcltq_f32(a, b)), a, b); }
    static V max_fast(V a, V b) { return vmaxq_f32(a, b); }
    static V clamp(V v, V lo, V hi) {
        v = vbslq_f32(vcltq_f32(v, lo), lo, v);
        return vbslq_f32(vcgtq_f32(v, hi), hi, v);
    }

    static float hsum(V v) { return vaddvq_f32(v); }
    static double hsum_double(V v) { return vaddvq_f64(vaddq_f64(vcvt_f64_f32(vget_low_f32(v)), vcvt_high_f64_f32(v))); }
    static float hmax(V v) { return vmaxvq_f32(v); }

    // trn1/trn2 on 32-bit lanes, then the 64-bit halves recombined.
    static void transpose(V (&r)[4]) {
        const float32x4x2_t a = vtrnq_f32(r[0], r[1]), b = vtrnq_f32(r[2], r[3]);
        r[0] = vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0]));
        r[1] = vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1]));
        r[2] = vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0]));
        r[3] = vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1]));
    }
};

}  // namespace
}  // namespace flexpipe
