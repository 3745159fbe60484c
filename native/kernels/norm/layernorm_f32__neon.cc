// SPDX-License-Identifier: Apache-2.0
// NEON float32 LayerNormalization row: mean in double lanes, centered variance in float lanes.
#include <arm_neon.h>

#include <cmath>

#include "common/macros.h"
#include "kernels/norm/norm.h"

namespace flexpipe {

void layernorm_row_f32__neon(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                             int64_t b_n, float epsilon, float* mean_out, float* inv_std_out) {
    FLEXPIPE_DCHECK(n >= 1 && (w_n == n || w_n == 1) && (b == nullptr || b_n == n || b_n == 1));
    // pass 1: sum(x) in four 2-lane double accumulators
    float64x2_t s0 = vdupq_n_f64(0.0), s1 = vdupq_n_f64(0.0), s2 = vdupq_n_f64(0.0), s3 = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = vld1q_f32(x + i), c = vld1q_f32(x + i + 4);
        s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(a)));
        s1 = vaddq_f64(s1, vcvt_high_f64_f32(a));
        s2 = vaddq_f64(s2, vcvt_f64_f32(vget_low_f32(c)));
        s3 = vaddq_f64(s3, vcvt_high_f64_f32(c));
    }
    double sum = vaddvq_f64(vaddq_f64(vaddq_f64(s0, s1), vaddq_f64(s2, s3)));
    for (; i < n; ++i) sum += x[i];
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    // pass 2: sum((x - mean)^2) in four 4-lane float accumulators
    const float32x4_t m = vdupq_n_f32(mean);
    float32x4_t q0 = vdupq_n_f32(0.0f), q1 = q0, q2 = q0, q3 = q0;
    for (i = 0; i + 16 <= n; i += 16) {
        const float32x4_t d0 = vsubq_f32(vld1q_f32(x + i), m), d1 = vsubq_f32(vld1q_f32(x + i + 4), m);
        const float32x4_t d2 = vsubq_f32(vld1q_f32(x + i + 8), m), d3 = vsubq_f32(vld1q_f32(x + i + 12), m);
        q0 = vfmaq_f32(q0, d0, d0);
        q1 = vfmaq_f32(q1, d1, d1);
        q2 = vfmaq_f32(q2, d2, d2);
        q3 = vfmaq_f32(q3, d3, d3);
    }
    for (; i + 4 <= n; i += 4) {
        const float32x4_t d = vsubq_f32(vld1q_f32(x + i), m);
        q0 = vfmaq_f32(q0, d, d);
    }
    float sq = vaddvq_f32(vaddq_f32(vaddq_f32(q0, q1), vaddq_f32(q2, q3)));
    for (; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const double var = static_cast<double>(sq) / static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
    // pass 3: y = (x - mean) * inv * w + b, the ref's operation order
    const bool wd = w_n != 1, bd = b != nullptr && b_n != 1;
    const float32x4_t w1 = vdupq_n_f32(w[0]), b1 = vdupq_n_f32(b ? b[0] : 0.0f);
    for (i = 0; i + 4 <= n; i += 4) {
        float32x4_t v =
            vmulq_f32(vmulq_n_f32(vsubq_f32(vld1q_f32(x + i), m), inv), wd ? vld1q_f32(w + i) : w1);
        if (b) v = vaddq_f32(v, bd ? vld1q_f32(b + i) : b1);
        vst1q_f32(y + i, v);
    }
    for (; i < n; ++i) {
        const float v = (x[i] - mean) * inv * w[wd ? i : 0];
        y[i] = b ? v + b[bd ? i : 0] : v;
    }
    if (mean_out) *mean_out = mean;
    if (inv_std_out) *inv_std_out = inv;
}

}  // namespace flexpipe
