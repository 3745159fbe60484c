// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 unary rows and Clip: the CNN/encoder hot functions vectorized, the rest on __ref.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"
#include "kernels/eltwise/vmath__avx2.h"

namespace flexpipe {

namespace {

using namespace vmath_avx2;

// y[i] = f(x[i]) over 16, then 8, then a masked tail of < 8 lanes (masked-off lanes read 0.0f and
// are not stored, so nothing outside [0, n) is touched).
template <typename F>
void map(const float* x, float* y, int64_t n, F f) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = f(_mm256_loadu_ps(x + i));
        const __m256 b = f(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, m, f(_mm256_maskload_ps(x + i, m)));
    }
}

// max(0, min(1, t)) with std::fmin/fmax's NaN rule (a NaN t gives 1): minps returns its 2nd operand.
__m256 unit_clamp(__m256 t) {
    return _mm256_max_ps(_mm256_min_ps(t, _mm256_set1_ps(1.0f)), _mm256_setzero_ps());
}

}  // namespace

void unary_f32__avx2(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 alpha = _mm256_set1_ps(static_cast<float>(p.alpha));
    const __m256 beta = _mm256_set1_ps(static_cast<float>(p.beta));
    switch (op) {
        case UnaryOp::relu:  // v < 0 ? 0 : v, exactly (NaN and -0 pass through)
            return map(x, y, n,
                       [=](__m256 v) { return _mm256_andnot_ps(_mm256_cmp_ps(v, zero, _CMP_LT_OQ), v); });
        case UnaryOp::leaky_relu:
            return map(x, y, n, [=](__m256 v) {
                return _mm256_blendv_ps(v, _mm256_mul_ps(alpha, v), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
            });
        case UnaryOp::sigmoid:
            return map(x, y, n, sigmoid_ps);
        case UnaryOp::tanh:
            return map(x, y, n, tanh_ps);
        case UnaryOp::exp:
            return map(x, y, n, exp_ps);
        case UnaryOp::erf:
            return map(x, y, n, erf_ps);
        case UnaryOp::sqrt:
            return map(x, y, n, [](__m256 v) { return _mm256_sqrt_ps(v); });
        case UnaryOp::gelu:
            return map(x, y, n, gelu_ps);
        case UnaryOp::gelu_tanh:
            return map(x, y, n, gelu_tanh_ps);
        case UnaryOp::hard_sigmoid:  // alpha*v + beta rounded twice, as the ref computes it
            return map(x, y, n,
                       [=](__m256 v) { return unit_clamp(_mm256_add_ps(_mm256_mul_ps(alpha, v), beta)); });
        case UnaryOp::hard_swish:  // v * clamp(v/6 + 1/2); v * (1/6) may differ from v / 6 by 1 ulp
            return map(x, y, n, [](__m256 v) {
                const __m256 t =
                    _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));
                return _mm256_mul_ps(v, unit_clamp(t));
            });
        default:
            return unary_f32__ref(op, p, x, y, n);
    }
}

// y = min(max(x, lo), hi) exactly as clip__ref: maxps(lo, v) is (lo > v ? lo : v) = (v < lo ? lo : v)
// and minps(hi, u) is (u > hi ? hi : u), NaN v passing through both.
void clip_f32__avx2(const float* x, float* y, int64_t n, float lo, float hi) {
    FLEXPIPE_DCHECK(n >= 0);
    const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
    map(x, y, n, [=](__m256 v) { return _mm256_min_ps(h, _mm256_max_ps(l, v)); });
}

}  // namespace flexpipe
