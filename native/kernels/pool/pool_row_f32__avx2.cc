// SPDX-License-Identifier: Apache-2.0
// AVX2 row micro-kernels of the fast float32 pooling path (contract in kernels/pool/pool.h).
//
// max(a, b) is _mm256_max_ps(a, b) = a > b ? a : b, the __ref expression, so max results equal __ref
// bit for bit (NaN and signed zeros included). Horizontal stride 2: the even elements of 16 floats come
// from one in-lane shuffle, [p0 p2 p8 p10 | p4 p6 p12 p14]; every tap has the same lane order, so the
// window max (or sum) is taken in that order and one cross-lane permute restores [p0 p2 ... p14].
#include <immintrin.h>

#include "kernels/pool/pool.h"

namespace flexpipe {

namespace {

// p[0], p[2], ..., p[14] in the order [0 2 8 10 | 4 6 12 14].
inline __m256 even_lanes(const float* p) {
    return _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
}

// [0 2 8 10 | 4 6 12 14] -> [0 2 4 6 | 8 10 12 14]: 64-bit pairs (0 1 2 3) -> (0 2 1 3).
inline __m256 unshuffle(__m256 v) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

inline float hmax8(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

// Sum of 8 lanes in double.
inline double hsum8(__m256 v) {
    const __m256d d = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                    _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

}  // namespace

void pool_vmax_f32__avx2(float* y, const float* a, const float* b, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(b + i), _mm256_loadu_ps(a + i)));
    if (i < n && n >= 8) {  // overlapping last vector: max is idempotent, even in place (y == a)
        i = n - 8;
        _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(b + i), _mm256_loadu_ps(a + i)));
        i = n;
    }
    for (; i < n; ++i) y[i] = b[i] > a[i] ? b[i] : a[i];
}

void pool_vsum_f32__avx2(float* y, const float* a, const float* b, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; ++i) y[i] = a[i] + b[i];
}

namespace {

// The window reduction of the horizontal kernels: m = op(m, next tap), taps in order as in __ref.
struct MaxOp {
    static __m256 v(__m256 m, __m256 x) { return _mm256_max_ps(x, m); }
    static float s(float m, float x) { return x > m ? x : m; }
    static __m256 finish(__m256 m, __m256) { return m; }
    static float finish(float m, float) { return m; }
};
struct SumOp {
    static __m256 v(__m256 m, __m256 x) { return _mm256_add_ps(m, x); }
    static float s(float m, float x) { return m + x; }
    static __m256 finish(__m256 m, __m256 scale) { return _mm256_mul_ps(m, scale); }
    static float finish(float m, float scale) { return m * scale; }
};

// Outputs o..o+7 for stride 1: taps are plain unaligned loads.
template <class Op>
inline void block_s1(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, __m256 scale) {
    __m256 m = _mm256_loadu_ps(b + o);
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, _mm256_loadu_ps(b + o + t * dilation));
    _mm256_storeu_ps(y + o, Op::finish(m, scale));
}

// Outputs o..o+7 for stride 2 (reads b[2o .. 2o + 15 + (k - 1) * dilation]).
template <class Op>
inline void block_s2(const float* b, float* y, int64_t o, int64_t k, int64_t dilation, __m256 scale) {
    const float* p = b + 2 * o;
    __m256 m = even_lanes(p);
    for (int64_t t = 1; t < k; ++t) m = Op::v(m, even_lanes(p + t * dilation));
    _mm256_storeu_ps(y + o, Op::finish(unshuffle(m), scale));
}

// Vector blocks for strides 1 and 2, then scalar outputs. The last block overlaps the previous one
// instead of leaving up to 8 scalar outputs (recomputed outputs get the same value). Stride 2: a block
// reads one float past the window of its last output, so blocks need o + 8 < n (the last output's
// window covers that float) and output n - 1 stays scalar.
template <class Op>
void horizontal(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                float scale) {
    const __m256 vs = _mm256_set1_ps(scale);
    int64_t o = 0;
    if (stride == 1 && n >= 8) {
        for (; o + 8 <= n; o += 8) block_s1<Op>(b, y, o, k, dilation, vs);
        if (o < n) block_s1<Op>(b, y, n - 8, k, dilation, vs);
        o = n;
    } else if (stride == 2 && n >= 9) {
        for (; o + 8 < n; o += 8) block_s2<Op>(b, y, o, k, dilation, vs);
        if (o < n - 1) block_s2<Op>(b, y, n - 9, k, dilation, vs);
        o = n - 1;
    }
    for (; o < n; ++o) {
        const float* w = b + o * stride;
        float m = w[0];
        for (int64_t t = 1; t < k; ++t) m = Op::s(m, w[t * dilation]);
        y[o] = Op::finish(m, scale);
    }
}

}  // namespace

void pool_hmax_f32__avx2(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation) {
    horizontal<MaxOp>(b, y, n, k, stride, dilation, 1.0f);
}

void pool_hsum_f32__avx2(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale) {
    horizontal<SumOp>(b, y, n, k, stride, dilation, scale);
}

namespace {

// Outputs o..o+7 of the fused 3x3 stride-2 max (reads r*[2o .. 2o + 17]): per tap column, the rows'
// even lanes reduced in row order, then the taps in column order; one permute at the end.
inline void block_max3x3s2(const float* r0, const float* r1, const float* r2, float* y, int64_t o) {
    const int64_t c = 2 * o;
    __m256 m = _mm256_setzero_ps();
    for (int t = 0; t < 3; ++t) {
        __m256 v = _mm256_max_ps(even_lanes(r1 + c + t), even_lanes(r0 + c + t));
        v = _mm256_max_ps(even_lanes(r2 + c + t), v);
        m = t == 0 ? v : _mm256_max_ps(v, m);
    }
    _mm256_storeu_ps(y + o, unshuffle(m));
}

}  // namespace

// Blocks of 8 as the stride-2 horizontal pass: they need o + 8 < n, the last one overlaps, and
// output n - 1 is scalar.
void pool_max3x3s2_f32__avx2(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    int64_t o = 0;
    if (n >= 9) {
        for (; o + 8 < n; o += 8) block_max3x3s2(r0, r1, r2, y, o);
        if (o < n - 1) block_max3x3s2(r0, r1, r2, y, n - 9);
        o = n - 1;
    }
    pool_max3x3s2_f32__ref(r0 + 2 * o, r1 + 2 * o, r2 + 2 * o, y + o, n - o);
}

// Four accumulators of 8 lanes (32 partial sums in float, 8 floats apart), combined in double.
double pool_sum_f32__avx2(const float* x, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
    double s = hsum8(s0) + hsum8(s1) + hsum8(s2) + hsum8(s3);
    for (; i < n; ++i) s += x[i];
    return s;
}

float pool_max_f32__avx2(const float* x, int64_t n) {
    int64_t i = 0;
    float m = x[0];
    if (n >= 8) {
        __m256 m0 = _mm256_loadu_ps(x), m1 = m0;
        for (i = 8; i + 16 <= n; i += 16) {
            m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
            m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
        }
        for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
        m = hmax8(_mm256_max_ps(m0, m1));
    } else {
        i = 1;
    }
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

}  // namespace flexpipe
