// SPDX-License-Identifier: Apache-2.0
// Reference float32 normalization kernels.
#include <cmath>

#include "common/macros.h"
#include "kernels/norm/norm.h"

namespace flexpipe {

void scale_shift_f32__ref(const float* x, float* y, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

void moments_f32__ref(const float* x, int64_t n, double* mean, double* var) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const double m = n > 0 ? sum / static_cast<double>(n) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = x[i] - m;
        sq += d * d;
    }
    *mean = m;
    *var = n > 0 ? sq / static_cast<double>(n) : 0.0;
}

void layernorm_row_f32__ref(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                            int64_t b_n, float epsilon, float* mean_out, float* inv_std_out) {
    FLEXPIPE_DCHECK(w_n == n || w_n == 1);
    double mean, var;
    moments_f32__ref(x, n, &mean, &var);
    const float m = static_cast<float>(mean);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
    const int64_t ws = w_n == 1 ? 0 : 1, bs = b_n == 1 ? 0 : 1;
    for (int64_t i = 0; i < n; ++i) {
        const float v = (x[i] - m) * inv * w[i * ws];
        y[i] = b ? v + b[i * bs] : v;
    }
    if (mean_out) *mean_out = m;
    if (inv_std_out) *inv_std_out = inv;
}

void lrn_f32__ref(const float* x, float* y, int64_t channels, int64_t inner, int64_t size, float alpha,
                  float beta,
                  float bias) {
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    const double scale = static_cast<double>(alpha) / static_cast<double>(size);
    for (int64_t c = 0; c < channels; ++c) {
        const int64_t lo = c - before < 0 ? 0 : c - before;
        const int64_t hi = c + after >= channels ? channels - 1 : c + after;
        for (int64_t i = 0; i < inner; ++i) {
            double sq = 0.0;
            for (int64_t k = lo; k <= hi; ++k) {
                const double v = x[k * inner + i];
                sq += v * v;
            }
            y[c * inner + i] = static_cast<float>(x[c * inner + i] / std::pow(bias + scale * sq, beta));
        }
    }
}

void mvn_f32__ref(const float* x, float* y, int64_t base, const int64_t* dims, const int64_t* strides,
                  int nr) {
    FLEXPIPE_DCHECK(nr >= 0 && nr <= 8);
    int64_t count = 1;
    for (int r = 0; r < nr; ++r) count *= dims[r];
    double sum = 0.0, sq = 0.0;
    for (int pass = 0; pass < 2; ++pass) {
        const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
        const double var = count > 0 ? sq / static_cast<double>(count) - mean * mean : 0.0;
        const double inv = 1.0 / (std::sqrt(var > 0.0 ? var : 0.0) + 1e-9);
        int64_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t off = base;
        for (int64_t e = 0; e < count; ++e) {
            if (pass == 0) {
                sum += x[off];
                sq += static_cast<double>(x[off]) * x[off];
            } else {
                y[off] = static_cast<float>((x[off] - mean) * inv);
            }
            for (int r = nr - 1; r >= 0; --r) {  // odometer over the reduced axes
                off += strides[r];
                if (++idx[r] < dims[r]) break;
                off -= strides[r] * dims[r];
                idx[r] = 0;
            }
        }
    }
}

}  // namespace flexpipe
