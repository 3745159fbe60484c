// SPDX-License-Identifier: Apache-2.0
// VecAvx2: the vector abstraction (simd/vec.h) over AVX2 + FMA, 8 float lanes (include only from files
// built with AVX2 enabled: *__avx2.cc and *__avx512.cc).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/simd/vec.h"

namespace flexpipe {
namespace {

struct VecAvx2 {
    using V = __m256;
    using M = __m256;
    static constexpr int lanes = 8;
    static constexpr bool masked_memory = true;

    // All-ones in lanes [0, n), n in [0, 8].
    static __m256i first(int64_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }

    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V load1(const float* p) { return _mm256_broadcast_ss(p); }
    static V set1(float s) { return _mm256_set1_ps(s); }
    static V zero() { return _mm256_setzero_ps(); }
    static V load_first(const float* p, int64_t n) { return _mm256_maskload_ps(p, first(n)); }
    static void store_first(float* p, int64_t n, V v) { _mm256_maskstore_ps(p, first(n), v); }
    template <int N>
    static void store_n(float* p, V v) {
        __m128 q = _mm256_castps256_ps128(v);
        if constexpr (N >= 4) {
            _mm_storeu_ps(p, q);
            q = _mm256_extractf128_ps(v, 1);
            p += 4;
        }
        if constexpr (N % 4 >= 2) {
            _mm_storel_pi(reinterpret_cast<__m64*>(p), q);
            q = _mm_movehl_ps(q, q);
            p += 2;
        }
        if constexpr (N % 2) _mm_store_ss(p, q);
    }
    // Even lanes of two loads in one in-lane shuffle ([0 2 8 10 | 4 6 12 14]), then 64-bit pairs restored.
    static V load_evens(const float* p) {
        const V e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    }
    // One in-lane shuffle per vector; evens_order's 64-bit permute restores [0 2 4 6 | 8 10 12 14].
    static V load_evens_raw(const float* p) {
        return _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
    }
    static void load_taps_s2_raw(const float* p, V (&t)[3]) {
        for (int k = 0; k < 3; ++k) t[k] = load_evens_raw(p + k);
    }
    static V evens_order(V v) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0))); }
    static V gather(const float* x, const int32_t* idx) {
        return _mm256_i32gather_ps(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)), 4);
    }
    // Stride 2 from p[0..7] and p[7..14] (never p[15]); larger strides gather.
    static V load_strided(const float* p, int64_t s) {
        if (s == 1) return _mm256_loadu_ps(p);
        if (s == 2) {
            const V lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p), _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0));
            const V hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + 7), _mm256_setr_epi32(0, 0, 0, 0, 1, 3, 5, 7));
            return _mm256_blend_ps(lo, hi, 0xF0);
        }
        const __m256i idx =
            _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(s)));
        return _mm256_i32gather_ps(p, idx, 4);
    }

    // p[0..15] split into even and odd lanes (two in-lane shuffles and two 64-bit permutes); the third tap
    // is the evens moved on by one lane with p[16] last.
    static void load_taps_s2(const float* p, V (&t)[3]) {
        const V a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
        const V ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // p0 p2 p8 p10 | p4 p6 p12 p14
        const V od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        t[0] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
        t[1] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
        const V rot = _mm256_permutevar8x32_ps(t[0], _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
        t[2] = _mm256_blend_ps(rot, _mm256_broadcast_ss(p + 16), 0x80);
    }

    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V div(V a, V b) { return _mm256_div_ps(a, b); }
    static V sqrt(V a) { return _mm256_sqrt_ps(a); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V fms(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
    static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
    static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
    static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V or_sign(V y, V x) { return _mm256_or_ps(y, _mm256_and_ps(_mm256_set1_ps(-0.0f), x)); }
    static V xor_sign(V y, V x) { return _mm256_xor_ps(y, _mm256_and_ps(_mm256_set1_ps(-0.0f), x)); }
    static V scale_pow2(V y, V n) {
        const __m256i ni = _mm256_cvtps_epi32(n), n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
        const __m256i bias = _mm256_set1_epi32(127);
        const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
        const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
        return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
    }

    static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
    static M gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
    static M ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
    static M isnan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
    static M first_lanes(int64_t n) { return _mm256_castsi256_ps(first(n)); }
    static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
    static V zero_if(M m, V a) { return _mm256_andnot_ps(m, a); }

    // maxps(a, b) is a > b ? a : b and minps(a, b) is a < b ? a : b, lane for lane: the exact forms.
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
    static V max_nan(V a, V b) { return _mm256_blendv_ps(_mm256_max_ps(a, b), a, isnan(a)); }
    static V min_nan(V a, V b) { return _mm256_blendv_ps(_mm256_min_ps(a, b), a, isnan(a)); }
    static V max_fast(V a, V b) { return _mm256_max_ps(a, b); }
    static V min_fast(V a, V b) { return _mm256_min_ps(a, b); }
    static V clamp(V v, V lo, V hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }

    static float hsum(V v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    static double hsum_double(V v) {
        const __m256d d = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
        __m128d s = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
        s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
        return _mm_cvtsd_f64(s);
    }
    using D = __m256d;
    static D dzero() { return _mm256_setzero_pd(); }
    static D dadd(D a, D b) { return _mm256_add_pd(a, b); }
    static D dadd_low(D d, V v) { return _mm256_add_pd(d, _mm256_cvtps_pd(_mm256_castps256_ps128(v))); }
    static D dadd_high(D d, V v) { return _mm256_add_pd(d, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))); }
    static double dsum(D d) {
        alignas(32) double lanes[4];
        _mm256_store_pd(lanes, d);
        return lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
    static float hmax(V v) {
        __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        s = _mm_max_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }

    // Unpack pairs, shuffle quads, swap 128-bit halves.
    static void transpose(V (&r)[8]) {
        const V u0 = _mm256_unpacklo_ps(r[0], r[1]), u1 = _mm256_unpackhi_ps(r[0], r[1]);
        const V u2 = _mm256_unpacklo_ps(r[2], r[3]), u3 = _mm256_unpackhi_ps(r[2], r[3]);
        const V u4 = _mm256_unpacklo_ps(r[4], r[5]), u5 = _mm256_unpackhi_ps(r[4], r[5]);
        const V u6 = _mm256_unpacklo_ps(r[6], r[7]), u7 = _mm256_unpackhi_ps(r[6], r[7]);
        const V s0 = _mm256_shuffle_ps(u0, u2, 0x44), s1 = _mm256_shuffle_ps(u0, u2, 0xee);
        const V s2 = _mm256_shuffle_ps(u1, u3, 0x44), s3 = _mm256_shuffle_ps(u1, u3, 0xee);
        const V s4 = _mm256_shuffle_ps(u4, u6, 0x44), s5 = _mm256_shuffle_ps(u4, u6, 0xee);
        const V s6 = _mm256_shuffle_ps(u5, u7, 0x44), s7 = _mm256_shuffle_ps(u5, u7, 0xee);
        r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
        r[1] = _mm256_permute2f128_ps(s1, s5, 0x20), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
        r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
        r[3] = _mm256_permute2f128_ps(s3, s7, 0x20), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
    }
};

}  // namespace
}  // namespace flexpipe
