// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 Softmax over a dense vector (stride 1); strided vectors run __ref.
#include <immintrin.h>

#include <cmath>

#include "common/macros.h"
#include "kernels/eltwise/vmath__avx2.h"
#include "kernels/softmax/softmax.h"

namespace flexpipe {

using namespace vmath_avx2;

void softmax_f32__avx2(const float* x, float* y, int64_t n, int64_t stride) {
    FLEXPIPE_DCHECK(n >= 0 && stride >= 1);
    if (stride != 1 || n < 8) return softmax_f32__ref(x, y, n, stride);
    // m = max(x): maxps(x, m) keeps m for a NaN x, like the ref's `x > m ? x : m`
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 m0 = ninf, m1 = ninf;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
    }
    for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    if (i < n) m1 = _mm256_max_ps(_mm256_loadu_ps(x + n - 8), m1);  // overlapping last 8 (n >= 8)
    const __m256 m = _mm256_set1_ps(hmax_ps(_mm256_max_ps(m0, m1)));
    // y = exp(x - m), sum in four 8-lane float accumulators
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (i = 0; i + 32 <= n; i += 32) {
        for (int k = 0; k < 4; ++k) {
            const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * k), m));
            _mm256_storeu_ps(y + i + 8 * k, e);
            acc[k] = _mm256_add_ps(acc[k], e);
        }
    }
    for (; i < n; i += 8) {
        const __m256i tm = tail_mask(n - i);
        const __m256 e =
            _mm256_and_ps(exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, tm), m)), _mm256_castsi256_ps(tm));
        _mm256_maskstore_ps(y + i, tm, e);
        acc[0] = _mm256_add_ps(acc[0], e);
    }
    const float sum = hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / static_cast<double>(sum)));
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    if (i < n) {
        const __m256i tm = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, tm, _mm256_mul_ps(_mm256_maskload_ps(y + i, tm), inv));
    }
}

}  // namespace flexpipe
