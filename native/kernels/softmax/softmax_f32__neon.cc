// SPDX-License-Identifier: Apache-2.0
// NEON float32 Softmax over a dense vector (stride 1); strided vectors run __ref.
#include <arm_neon.h>

#include <cmath>

#include "common/macros.h"
#include "kernels/eltwise/vmath__neon.h"
#include "kernels/softmax/softmax.h"

namespace flexpipe {

using namespace vmath_neon;

void softmax_f32__neon(const float* x, float* y, int64_t n, int64_t stride) {
    FLEXPIPE_DCHECK(n >= 0 && stride >= 1);
    if (stride != 1 || n < 4) return softmax_f32__ref(x, y, n, stride);
    // m = max(x), skipping NaN as the ref's `x > m ? x : m` does (vmaxq would propagate it)
    float32x4_t m0 = vdupq_n_f32(-INFINITY);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        m0 = vbslq_f32(vcgtq_f32(v, m0), v, m0);
    }
    if (i < n) {
        const float32x4_t v = vld1q_f32(x + n - 4);  // overlapping last 4 (n >= 4)
        m0 = vbslq_f32(vcgtq_f32(v, m0), v, m0);
    }
    const float32x4_t m = vdupq_n_f32(vmaxvq_f32(m0));
    // y = exp(x - m), sum in four 4-lane float accumulators
    float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (i = 0; i + 16 <= n; i += 16) {
        for (int k = 0; k < 4; ++k) {
            const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(x + i + 4 * k), m));
            vst1q_f32(y + i + 4 * k, e);
            acc[k] = vaddq_f32(acc[k], e);
        }
    }
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(x + i), m));
        vst1q_f32(y + i, e);
        acc[0] = vaddq_f32(acc[0], e);
    }
    if (i < n) {
        float buf[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        for (int64_t k = 0; i + k < n; ++k) buf[k] = x[i + k];
        const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(buf), m));  // exp(-inf) = 0 in unused lanes
        vst1q_f32(buf, e);
        for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
        acc[1] = vaddq_f32(acc[1], e);
    }
    const float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    const float inv = static_cast<float>(1.0 / static_cast<double>(sum));
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), inv));
    for (; i < n; ++i) y[i] *= inv;
}

}  // namespace flexpipe
