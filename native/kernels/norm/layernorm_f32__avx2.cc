// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 LayerNormalization row: mean in double lanes, centered variance in float lanes.
#include <immintrin.h>

#include <cmath>

#include "common/macros.h"
#include "kernels/eltwise/vmath__avx2.h"
#include "kernels/norm/norm.h"

namespace flexpipe {

using namespace vmath_avx2;

void layernorm_row_f32__avx2(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                             int64_t b_n, float epsilon, float* mean_out, float* inv_std_out) {
    FLEXPIPE_DCHECK(n >= 1 && (w_n == n || w_n == 1) && (b == nullptr || b_n == n || b_n == 1));
    // pass 1: sum(x) in four 4-lane double accumulators (the mean is exact to float rounding)
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm256_setzero_pd(),
            s3 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_loadu_ps(x + i), c = _mm256_loadu_ps(x + i + 8);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
        s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm256_castps256_ps128(c)));
        s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm256_extractf128_ps(c, 1)));
    }
    for (; i < n; i += 8) {
        const __m256 a = _mm256_maskload_ps(x + i, tail_mask(n - i));
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
    const float mean =
        static_cast<float>((lanes[0] + lanes[1] + lanes[2] + lanes[3]) / static_cast<double>(n));
    // pass 2: sum((x - mean)^2) in four 8-lane float accumulators
    const __m256 m = _mm256_set1_ps(mean);
    __m256 q[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (i = 0; i + 32 <= n; i += 32) {
        for (int k = 0; k < 4; ++k) {
            const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * k), m);
            q[k] = _mm256_fmadd_ps(d, d, q[k]);
        }
    }
    for (; i < n; i += 8) {
        const __m256i tm = tail_mask(n - i);
        const __m256 d =
            _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, tm), m), _mm256_castsi256_ps(tm));
        q[0] = _mm256_fmadd_ps(d, d, q[0]);
    }
    const double var =
        hsum_ps(_mm256_add_ps(_mm256_add_ps(q[0], q[1]), _mm256_add_ps(q[2], q[3]))) / static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
    // pass 3: y = (x - mean) * inv * w + b, the ref's operation order
    const __m256 vi = _mm256_set1_ps(inv);
    const __m256 w1 = _mm256_set1_ps(w[0]);
    const __m256 b1 = _mm256_set1_ps(b ? b[0] : 0.0f);
    const bool wd = w_n != 1, bd = b != nullptr && b_n != 1;
    for (i = 0; i < n; i += 8) {
        const __m256i tm = tail_mask(n - i);
        const bool full = i + 8 <= n;
        const __m256 xv = full ? _mm256_loadu_ps(x + i) : _mm256_maskload_ps(x + i, tm);
        const __m256 wv = !wd ? w1 : full ? _mm256_loadu_ps(w + i) : _mm256_maskload_ps(w + i, tm);
        __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(xv, m), vi), wv);
        if (b) v = _mm256_add_ps(v, !bd ? b1 : full ? _mm256_loadu_ps(b + i) : _mm256_maskload_ps(b + i, tm));
        if (full)
            _mm256_storeu_ps(y + i, v);
        else
            _mm256_maskstore_ps(y + i, tm, v);
    }
    if (mean_out) *mean_out = mean;
    if (inv_std_out) *inv_std_out = inv;
}

}  // namespace flexpipe
