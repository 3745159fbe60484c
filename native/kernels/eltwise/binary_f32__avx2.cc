// SPDX-License-Identifier: Apache-2.0
// AVX2 float32 binary rows: Add, Sub, Mul, Div, Max, Min bit-exact with __ref; other ops on __ref.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/eltwise/eltwise.h"
#include "kernels/eltwise/vmath__avx2.h"

namespace flexpipe {

namespace {

using vmath_avx2::tail_mask;

// y[i] = f(a[i*sa], b[i*sb]); a stride-0 operand is broadcast once. The tail uses masked loads of
// the dense operands and a masked store, so nothing outside [0, n) is read or written.
template <bool dense_a, bool dense_b, typename F>
void map2(const float* a, const float* b, float* y, int64_t n, F f) {
    const __m256 ab = _mm256_set1_ps(a[0]), bb = _mm256_set1_ps(b[0]);
    auto load_a = [&](int64_t i) { return dense_a ? _mm256_loadu_ps(a + i) : ab; };
    auto load_b = [&](int64_t i) { return dense_b ? _mm256_loadu_ps(b + i) : bb; };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 r0 = f(load_a(i), load_b(i));
        const __m256 r1 = f(load_a(i + 8), load_b(i + 8));
        _mm256_storeu_ps(y + i, r0);
        _mm256_storeu_ps(y + i + 8, r1);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(load_a(i), load_b(i)));
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        const __m256 va = dense_a ? _mm256_maskload_ps(a + i, m) : ab;
        const __m256 vb = dense_b ? _mm256_maskload_ps(b + i, m) : bb;
        _mm256_maskstore_ps(y + i, m, f(va, vb));
    }
}

// The stride cases as separate instantiations, so the dense loops carry no per-element branches.
template <typename F>
void run(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, F f) {
    if (sa && sb) return map2<true, true>(a, b, y, n, f);
    if (sa) return map2<true, false>(a, b, y, n, f);
    return map2<false, true>(a, b, y, n, f);
}

}  // namespace

void binary_f32__avx2(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                      int64_t n) {
    FLEXPIPE_DCHECK(n >= 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1));
    if (n <= 0) return;
    if (sa == 0 && sb == 0) return binary_f32__ref(op, a, sa, b, sb, y, n);
    switch (op) {
        case BinaryOp::add:
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) { return _mm256_add_ps(u, v); });
        case BinaryOp::sub:
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) { return _mm256_sub_ps(u, v); });
        case BinaryOp::mul:
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) { return _mm256_mul_ps(u, v); });
        case BinaryOp::div:
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) { return _mm256_div_ps(u, v); });
        case BinaryOp::max:  // nan_max: (u != u || u > v) ? u : v; maxps is (u > v ? u : v)
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) {
                return _mm256_blendv_ps(_mm256_max_ps(u, v), u, _mm256_cmp_ps(u, u, _CMP_UNORD_Q));
            });
        case BinaryOp::min:  // nan_min: (u != u || u < v) ? u : v; minps is (u < v ? u : v)
            return run(a, sa, b, sb, y, n, [](__m256 u, __m256 v) {
                return _mm256_blendv_ps(_mm256_min_ps(u, v), u, _mm256_cmp_ps(u, u, _CMP_UNORD_Q));
            });
        default:
            return binary_f32__ref(op, a, sa, b, sb, y, n);
    }
}

}  // namespace flexpipe
