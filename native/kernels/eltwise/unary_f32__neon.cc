// SPDX-License-Identifier: Apache-2.0
// NEON float32 unary rows and Clip: the CNN/encoder hot functions vectorized, the rest on __ref.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"
#include "kernels/eltwise/vmath__neon.h"

namespace flexpipe {

namespace {

using namespace vmath_neon;

// y[i] = f(x[i]) over 8, then 4, then a tail of < 4 through a zero-padded stack buffer (nothing
// outside [0, n) is read or written).
template <typename F>
void map(const float* x, float* y, int64_t n, F f) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = f(vld1q_f32(x + i));
        const float32x4_t b = f(vld1q_f32(x + i + 4));
        vst1q_f32(y + i, a);
        vst1q_f32(y + i + 4, b);
    }
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
    if (i < n) {
        float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t k = 0; i + k < n; ++k) buf[k] = x[i + k];
        vst1q_f32(buf, f(vld1q_f32(buf)));
        for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
    }
}

// max(0, min(1, t)) with std::fmin/fmax's rule that a NaN t gives 1 (vminq would keep the NaN).
float32x4_t unit_clamp(float32x4_t t) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t u = vbslq_f32(vcltq_f32(t, one), t, one);
    return vbslq_f32(vcgtq_f32(u, vdupq_n_f32(0.0f)), u, vdupq_n_f32(0.0f));
}

}  // namespace

void unary_f32__neon(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    const float32x4_t zero = vdupq_n_f32(0.0f);
    const float32x4_t alpha = vdupq_n_f32(static_cast<float>(p.alpha));
    const float32x4_t beta = vdupq_n_f32(static_cast<float>(p.beta));
    switch (op) {
        case UnaryOp::relu:  // v < 0 ? 0 : v, exactly (NaN and -0 pass through)
            return map(x, y, n, [=](float32x4_t v) { return vbslq_f32(vcltq_f32(v, zero), zero, v); });
        case UnaryOp::leaky_relu:
            return map(x, y, n,
                       [=](float32x4_t v) { return vbslq_f32(vcltq_f32(v, zero), vmulq_f32(alpha, v), v); });
        case UnaryOp::sigmoid:
            return map(x, y, n, sigmoid_ps);
        case UnaryOp::tanh:
            return map(x, y, n, tanh_ps);
        case UnaryOp::exp:
            return map(x, y, n, exp_ps);
        case UnaryOp::erf:
            return map(x, y, n, erf_ps);
        case UnaryOp::sqrt:
            return map(x, y, n, [](float32x4_t v) { return vsqrtq_f32(v); });
        case UnaryOp::gelu:
            return map(x, y, n, gelu_ps);
        case UnaryOp::gelu_tanh:
            return map(x, y, n, gelu_tanh_ps);
        case UnaryOp::hard_sigmoid:  // alpha*v + beta rounded twice, as the ref computes it
            return map(x, y, n,
                       [=](float32x4_t v) { return unit_clamp(vaddq_f32(vmulq_f32(alpha, v), beta)); });
        case UnaryOp::hard_swish:  // v * clamp(v/6 + 1/2); v * (1/6) may differ from v / 6 by 1 ulp
            return map(x, y, n, [](float32x4_t v) {
                const float32x4_t t = vaddq_f32(vmulq_n_f32(v, 1.0f / 6.0f), vdupq_n_f32(0.5f));
                return vmulq_f32(v, unit_clamp(t));
            });
        default:
            return unary_f32__ref(op, p, x, y, n);
    }
}

// y = min(max(x, lo), hi) exactly as clip__ref: (v < lo ? lo : v), then (u > hi ? hi : u); NaN passes.
void clip_f32__neon(const float* x, float* y, int64_t n, float lo, float hi) {
    FLEXPIPE_DCHECK(n >= 0);
    const float32x4_t l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
    map(x, y, n, [=](float32x4_t v) {
        const float32x4_t u = vbslq_f32(vcltq_f32(v, l), l, v);
        return vbslq_f32(vcgtq_f32(u, h), h, u);
    });
}

}  // namespace flexpipe
