// SPDX-License-Identifier: Apache-2.0
// NEON row micro-kernels of the fast float32 pooling path (contract in kernels/pool/pool.h).
//
// Horizontal stride 2: vld2q_f32 de-interleaves 8 floats into the even and odd elements, so tap t of
// outputs o..o+3 is vld2q_f32(b + 2o + t * dilation).val[0]. vmaxq_f32 returns NaN when either input is
// NaN (unlike __ref); results equal __ref bit for bit on other data.
#include <arm_neon.h>

#include "kernels/pool/pool.h"

namespace flexpipe {

void pool_vmax_f32__neon(float* acc, const float* row, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(acc + i, vmaxq_f32(vld1q_f32(row + i), vld1q_f32(acc + i)));
    for (; i < n; ++i) acc[i] = row[i] > acc[i] ? row[i] : acc[i];
}

void pool_vsum_f32__neon(float* acc, const float* row, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(acc + i, vaddq_f32(vld1q_f32(acc + i), vld1q_f32(row + i)));
    for (; i < n; ++i) acc[i] += row[i];
}

void pool_hmax_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation) {
    int64_t o = 0;
    if (stride == 1) {
        for (; o + 4 <= n; o += 4) {
            float32x4_t m = vld1q_f32(b + o);
            for (int64_t t = 1; t < k; ++t) m = vmaxq_f32(vld1q_f32(b + o + t * dilation), m);
            vst1q_f32(y + o, m);
        }
    } else if (stride == 2) {
        // vld2q_f32 reads 8 floats, the last (odd) one past the window of output o + 3: o + 4 < n keeps it
        // inside the window of output n - 1.
        for (; o + 4 < n; o += 4) {
            const float* p = b + 2 * o;
            float32x4_t m = vld2q_f32(p).val[0];
            for (int64_t t = 1; t < k; ++t) m = vmaxq_f32(vld2q_f32(p + t * dilation).val[0], m);
            vst1q_f32(y + o, m);
        }
    }
    for (; o < n; ++o) {
        const float* w = b + o * stride;
        float m = w[0];
        for (int64_t t = 1; t < k; ++t) m = w[t * dilation] > m ? w[t * dilation] : m;
        y[o] = m;
    }
}

void pool_hsum_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale) {
    int64_t o = 0;
    if (stride == 1) {
        for (; o + 4 <= n; o += 4) {
            float32x4_t s = vld1q_f32(b + o);
            for (int64_t t = 1; t < k; ++t) s = vaddq_f32(s, vld1q_f32(b + o + t * dilation));
            vst1q_f32(y + o, vmulq_n_f32(s, scale));
        }
    } else if (stride == 2) {
        for (; o + 4 < n; o += 4) {  // o + 4 < n: see pool_hmax_f32__neon
            const float* p = b + 2 * o;
            float32x4_t s = vld2q_f32(p).val[0];
            for (int64_t t = 1; t < k; ++t) s = vaddq_f32(s, vld2q_f32(p + t * dilation).val[0]);
            vst1q_f32(y + o, vmulq_n_f32(s, scale));
        }
    }
    for (; o < n; ++o) {
        const float* w = b + o * stride;
        float s = w[0];
        for (int64_t t = 1; t < k; ++t) s += w[t * dilation];
        y[o] = s * scale;
    }
}

// Four accumulators of 4 lanes (16 partial sums in float), added pairwise, then combined in double.
double pool_sum_f32__neon(const float* x, int64_t n) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = vaddq_f32(s0, vld1q_f32(x + i));
        s1 = vaddq_f32(s1, vld1q_f32(x + i + 4));
        s2 = vaddq_f32(s2, vld1q_f32(x + i + 8));
        s3 = vaddq_f32(s3, vld1q_f32(x + i + 12));
    }
    for (; i + 4 <= n; i += 4) s0 = vaddq_f32(s0, vld1q_f32(x + i));
    const float32x4_t v = vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3));
    double s = vaddvq_f64(vaddq_f64(vcvt_f64_f32(vget_low_f32(v)), vcvt_high_f64_f32(v)));
    for (; i < n; ++i) s += x[i];
    return s;
}

float pool_max_f32__neon(const float* x, int64_t n) {
    int64_t i = 0;
    float m = x[0];
    if (n >= 4) {
        float32x4_t m0 = vld1q_f32(x), m1 = m0;
        for (i = 4; i + 8 <= n; i += 8) {
            m0 = vmaxq_f32(vld1q_f32(x + i), m0);
            m1 = vmaxq_f32(vld1q_f32(x + i + 4), m1);
        }
        for (; i + 4 <= n; i += 4) m0 = vmaxq_f32(vld1q_f32(x + i), m0);
        m = vmaxvq_f32(vmaxq_f32(m0, m1));
    } else {
        i = 1;
    }
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

}  // namespace flexpipe
