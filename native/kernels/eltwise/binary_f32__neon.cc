// SPDX-License-Identifier: Apache-2.0
// NEON float32 binary rows: Add, Sub, Mul, Div, Max, Min bit-exact with __ref; other ops on __ref.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"

namespace flexpipe {

namespace {

// y[i] = f(a[i*sa], b[i*sb]) with the stride pattern as template arguments; the tail (< 4) goes
// through stack buffers so nothing outside [0, n) is read or written.
template <bool dense_a, bool dense_b, typename F>
void map2(const float* a, const float* b, float* y, int64_t n, F f) {
    const float32x4_t ab = vdupq_n_f32(a[0]), bb = vdupq_n_f32(b[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t r0 = f(dense_a ? vld1q_f32(a + i) : ab, dense_b ? vld1q_f32(b + i) : bb);
        const float32x4_t r1 = f(dense_a ? vld1q_f32(a + i + 4) : ab, dense_b ? vld1q_f32(b + i + 4) : bb);
        vst1q_f32(y + i, r0);
        vst1q_f32(y + i + 4, r1);
    }
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, f(dense_a ? vld1q_f32(a + i) : ab, dense_b ? vld1q_f32(b + i) : bb));
    if (i < n) {
        float ta[4] = {a[0], a[0], a[0], a[0]}, tb[4] = {b[0], b[0], b[0], b[0]}, ty[4];
        for (int64_t k = 0; i + k < n; ++k) {
            if (dense_a) ta[k] = a[i + k];
            if (dense_b) tb[k] = b[i + k];
        }
        vst1q_f32(ty, f(vld1q_f32(ta), vld1q_f32(tb)));
        for (int64_t k = 0; i + k < n; ++k) y[i + k] = ty[k];
    }
}

template <typename F>
void run(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, F f) {
    if (sa && sb) return map2<true, true>(a, b, y, n, f);
    if (sa) return map2<true, false>(a, b, y, n, f);
    return map2<false, true>(a, b, y, n, f);
}

}  // namespace

void binary_f32__neon(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                      int64_t n) {
    FLEXPIPE_DCHECK(n >= 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1));
    if (n <= 0) return;
    if (sa == 0 && sb == 0) return binary_f32__ref(op, a, sa, b, sb, y, n);
    switch (op) {
        case BinaryOp::add:
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) { return vaddq_f32(u, v); });
        case BinaryOp::sub:
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) { return vsubq_f32(u, v); });
        case BinaryOp::mul:
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) { return vmulq_f32(u, v); });
        case BinaryOp::div:
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) { return vdivq_f32(u, v); });
        case BinaryOp::max:  // nan_max: (u != u || u > v) ? u : v, by selects (fmax orders -0 < +0)
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) {
                const uint32x4_t take_u = vorrq_u32(vmvnq_u32(vceqq_f32(u, u)), vcgtq_f32(u, v));
                return vbslq_f32(take_u, u, v);
            });
        case BinaryOp::min:  // nan_min: (u != u || u < v) ? u : v
            return run(a, sa, b, sb, y, n, [](float32x4_t u, float32x4_t v) {
                const uint32x4_t take_u = vorrq_u32(vmvnq_u32(vceqq_f32(u, u)), vcltq_f32(u, v));
                return vbslq_f32(take_u, u, v);
            });
        default:
            return binary_f32__ref(op, a, sa, b, sb, y, n);
    }
}

}  // namespace flexpipe
