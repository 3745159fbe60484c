// SPDX-License-Identifier: Apache-2.0
// NEON row micro-kernels of the fast float32 pooling path (contract in kernels/pool/pool.h).
//
// Horizontal stride 2: vld2q_f32 de-interleaves 8 floats into the even and odd elements, so tap t of
// outputs o..o+3 is vld2q_f32(b + 2o + t * dilation).val[0]. vmaxq_f32 returns NaN when either input is
// NaN (unlike __ref); results equal __ref bit for bit on other data.
#include <arm_neon.h>

#include "kernels/pool/pool.h"

namespace flexpipe {

void pool_vmax_f32__neon(float* y, const float* a, const float* b, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmaxq_f32(vld1q_f32(b + i), vld1q_f32(a + i)));
    if (i < n && n >= 4) {  // overlapping last vector: max is idempotent, even in place (y == a)
        i = n - 4;
        vst1q_f32(y + i, vmaxq_f32(vld1q_f32(b + i), vld1q_f32(a + i)));
        i = n;
    }
    for (; i < n; ++i) y[i] = b[i] > a[i] ? b[i] : a[i];
}

void pool_vsum_f32__neon(float* y, const float* a, const float* b, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    for (; i < n; ++i) y[i] = a[i] + b[i];
}

namespace {

// The window reduction of the horizontal kernels: m = op(m, next tap), taps in order as in __ref.
struct MaxOp {
    static float32x4_t v(float32x4_t m, float32x4_t x) { return vmaxq_f32(x, m); }
    static float s(float m, float x) { return x > m ? x : m; }
    static float32x4_t finish(float32x4_t m, float) { return m; }
    static float finish(float m, float) { return m; }
};
struct SumOp {
    static float32x4_t v(float32x4_t m, float32x4_t x) { return vaddq_f32(m, x); }
    static float s(float m, float x) { return m + x; }
    static float32x4_t finish(float32x4_t m, float scale) { return vmulq_n_f32(m, scale); }
    static float finish(float m, float scale) { return m * scale; }
};

// Outputs o..o+3 for stride 1.
template <class Op>
inline void block_s1(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, float scale) {
    float32x4_t m = vld1q_f32(b + o);
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, vld1q_f32(b + o + t * dilation));
    vst1q_f32(y + o, Op::finish(m, scale));
}

// Outputs o..o+3 for stride 2 (reads b[2o .. 2o + 7 + (k - 1) * dilation]).
template <class Op>
inline void block_s2(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, float scale) {
    const float* p = b + 2 * o;
    float32x4_t m = vld2q_f32(p).val[0];
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, vld2q_f32(p + t * dilation).val[0]);
    vst1q_f32(y + o, Op::finish(m, scale));
}

// Vector blocks for strides 1 and 2, then scalar outputs; the last block overlaps the previous one
// (recomputed outputs get the same value). Stride 2: a block reads one float past the window of its last
// output, so blocks need o + 4 < n and output n - 1 stays scalar.
template <class Op>
void horizontal(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                float scale) {
    int64_t o = 0;
    if (stride == 1 && n >= 4) {
        for (; o + 4 <= n; o += 4) block_s1<Op>(b, y, o, k, dilation, scale);
        if (o < n) block_s1<Op>(b, y, n - 4, k, dilation, scale);
        o = n;
    } else if (stride == 2 && n >= 5) {
        for (; o + 4 < n; o += 4) block_s2<Op>(b, y, o, k, dilation, scale);
        if (o < n - 1) block_s2<Op>(b, y, n - 5, k, dilation, scale);
        o = n - 1;
    }
    for (; o < n; ++o) {
        const float* w = b + o * stride;
        float m = w[0];
        for (int64_t t = 1; t < k; ++t) m = Op::s(m, w[t * dilation]);
        y[o] = Op::finish(m, scale);
    }
}

}  // namespace

void pool_hmax_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation) {
    horizontal<MaxOp>(b, y, n, k, stride, dilation, 1.0f);
}

void pool_hsum_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale) {
    horizontal<SumOp>(b, y, n, k, stride, dilation, scale);
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

namespace {

// Outputs o..o+3 of the fused 3x3 stride-2 max (reads r*[2o .. 2o + 9]): vld2q_f32 gives the even
// columns of taps 0 and 2 (at 2o and 2o + 2) and the odd ones of tap 1.
inline void block_max3x3s2(const float* r0, const float* r1, const float* r2, float* y, int64_t o) {
    const int64_t c = 2 * o;
    const float32x4x2_t a0 = vld2q_f32(r0 + c), a1 = vld2q_f32(r1 + c), a2 = vld2q_f32(r2 + c);
    const float32x4_t b0 = vld2q_f32(r0 + c + 2).val[0], b1 = vld2q_f32(r1 + c + 2).val[0],
                      b2 = vld2q_f32(r2 + c + 2).val[0];
    const float32x4_t v0 = vmaxq_f32(a2.val[0], vmaxq_f32(a1.val[0], a0.val[0]));
    const float32x4_t v1 = vmaxq_f32(a2.val[1], vmaxq_f32(a1.val[1], a0.val[1]));
    const float32x4_t v2 = vmaxq_f32(b2, vmaxq_f32(b1, b0));
    vst1q_f32(y + o, vmaxq_f32(v2, vmaxq_f32(v1, v0)));
}

}  // namespace

// Blocks of 4 as the stride-2 horizontal pass: they need o + 4 < n, the last one overlaps, and
// output n - 1 is scalar.
void pool_max3x3s2_f32__neon(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    int64_t o = 0;
    if (n >= 5) {
        for (; o + 4 < n; o += 4) block_max3x3s2(r0, r1, r2, y, o);
        if (o < n - 1) block_max3x3s2(r0, r1, r2, y, n - 5);
        o = n - 1;
    }
    pool_max3x3s2_f32__ref(r0 + 2 * o, r1 + 2 * o, r2 + 2 * o, y + o, n - o);
}

}  // namespace flexpipe
