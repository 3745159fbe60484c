// SPDX-License-Identifier: Apache-2.0
// Reference row micro-kernels of the fast float32 pooling path (contract in kernels/pool/pool.h).
#include "kernels/pool/pool.h"

namespace flexpipe {

void pool_vmax_f32__ref(float* y, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = b[i] > a[i] ? b[i] : a[i];
}

void pool_vsum_f32__ref(float* y, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void pool_hmax_f32__ref(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation) {
    for (int64_t o = 0; o < n; ++o) {
        const float* w = b + o * stride;
        float m = w[0];
        for (int64_t t = 1; t < k; ++t) m = w[t * dilation] > m ? w[t * dilation] : m;
        y[o] = m;
    }
}

void pool_hsum_f32__ref(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                        float scale) {
    for (int64_t o = 0; o < n; ++o) {
        const float* w = b + o * stride;
        float s = w[0];
        for (int64_t t = 1; t < k; ++t) s += w[t * dilation];
        y[o] = s * scale;
    }
}

double pool_sum_f32__ref(const float* x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
}

float pool_max_f32__ref(const float* x, int64_t n) {
    float m = x[0];
    for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

void pool_max3x3s2_f32__ref(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    for (int64_t o = 0; o < n; ++o) {
        float m = 0.0f;
        for (int64_t t = 0; t < 3; ++t) {
            const int64_t c = 2 * o + t;
            float v = r1[c] > r0[c] ? r1[c] : r0[c];
            v = r2[c] > v ? r2[c] : v;
            m = t == 0 || v > m ? v : m;
        }
        y[o] = m;
    }
}

}  // namespace flexpipe
