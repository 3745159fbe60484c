// SPDX-License-Identifier: Apache-2.0
// Reference float32 Softmax / LogSoftmax / Hardmax over one strided vector.
#include <cmath>

#include "kernels/softmax/softmax.h"

namespace flexpipe {

static float max_of(const float* x, int64_t n, int64_t stride) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = x[i * stride] > m ? x[i * stride] : m;
    return m;
}

void softmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride) {
    const float m = max_of(x, n, stride);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float e = std::exp(x[i * stride] - m);
        y[i * stride] = e;
        sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) y[i * stride] *= inv;
}

void logsoftmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride) {
    const float m = max_of(x, n, stride);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i * stride] - m));
    const float lse = static_cast<float>(std::log(sum));
    for (int64_t i = 0; i < n; ++i) y[i * stride] = x[i * stride] - m - lse;
}

void hardmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride) {
    int64_t arg = 0;
    for (int64_t i = 1; i < n; ++i) arg = x[i * stride] > x[arg * stride] ? i : arg;
    for (int64_t i = 0; i < n; ++i) y[i * stride] = i == arg ? 1.0f : 0.0f;
}

}  // namespace flexpipe
