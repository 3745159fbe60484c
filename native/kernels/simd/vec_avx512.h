// SPDX-License-Identifier: Apache-2.0
// VecAvx512: the vector abstraction (simd/vec.h) over AVX-512F, 16 float lanes, lane masks in k
// registers (include only from *__avx512.cc files).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/simd/vec.h"

// GCC 12's _mm512 max, min, shuffles and unpacks pass _mm512_undefined_ps() (a self-initialised variable)
// as their unused merge source, which -Wmaybe-uninitialized (or -Wuninitialized, depending on what got
// inlined where) reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace flexpipe {
namespace {

struct VecAvx512 {
    using V = __m512;
    using M = __mmask16;
    static constexpr int lanes = 16;
    static constexpr bool masked_memory = true;

    static M first(int64_t n) {
        return n >= 16 ? static_cast<M>(0xFFFF) : n <= 0 ? static_cast<M>(0) : static_cast<M>((1u << n) - 1u);
    }

    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V load1(const float* p) { return _mm512_set1_ps(*p); }
    static V set1(float s) { return _mm512_set1_ps(s); }
    static V zero() { return _mm512_setzero_ps(); }
    static V load_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first(n), p); }
    static void store_first(float* p, int64_t n, V v) { _mm512_mask_storeu_ps(p, first(n), v); }
    template <int N>
    static void store_n(float* p, V v) {
        _mm512_mask_storeu_ps(p, first(N), v);
    }
    static V load_evens(const float* p) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
    }
    static V load_evens_raw(const float* p) { return load_evens(p); }
    static void load_taps_s2_raw(const float* p, V (&t)[3]) {
        for (int k = 0; k < 3; ++k) t[k] = load_evens(p + k);
    }
    static V evens_order(V v) { return v; }
    static V gather(const float* x, const int32_t* idx) {
        return _mm512_i32gather_ps(_mm512_loadu_si512(idx), x, 4);
    }
    // Stride 2 from p[0..15] and p[15..30] (never p[31]); larger strides gather.
    static V load_strided(const float* p, int64_t s) {
        if (s == 1) return _mm512_loadu_ps(p);
        if (s == 2) {
            const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
            return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 15));
        }
        const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(static_cast<int>(s)));
        return _mm512_i32gather_ps(idx, p, 4);
    }

    // Two-source permutes split p[0..31] into even and odd lanes; the third tap is the evens moved on by
    // one lane with p[32] last (valignd).
    static void load_taps_s2(const float* p, V (&t)[3]) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        const V a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
        t[0] = _mm512_permutex2var_ps(a, even, b);
        t[1] = _mm512_permutex2var_ps(a, odd, b);
        t[2] = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_castps_si512(_mm512_set1_ps(p[32])), _mm512_castps_si512(t[0]), 1));
    }

    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V div(V a, V b) { return _mm512_div_ps(a, b); }
    static V sqrt(V a) { return _mm512_sqrt_ps(a); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V fms(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
    static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
    static V abs(V a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff))); }
    static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V or_sign(V y, V x) {
        const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
        return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), sign));
    }
    static V xor_sign(V y, V x) {
        const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
        return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(y), sign));
    }
    static V scale_pow2(V y, V n) {
        const __m512i ni = _mm512_cvtps_epi32(n), n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
        const __m512i bias = _mm512_set1_epi32(127);
        const V s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
        const V s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
        return _mm512_mul_ps(_mm512_mul_ps(y, s1), s2);
    }

    static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
    static M gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
    static M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
    static M isnan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
    static M first_lanes(int64_t n) { return first(n); }
    static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
    static V zero_if(M m, V a) { return _mm512_maskz_mov_ps(static_cast<M>(~m), a); }

    // vmaxps(a, b) is a > b ? a : b and vminps(a, b) is a < b ? a : b, lane for lane: the exact forms.
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V min(V a, V b) { return _mm512_min_ps(a, b); }
    static V max_nan(V a, V b) { return _mm512_mask_blend_ps(isnan(a), _mm512_max_ps(a, b), a); }
    static V min_nan(V a, V b) { return _mm512_mask_blend_ps(isnan(a), _mm512_min_ps(a, b), a); }
    static V max_fast(V a, V b) { return _mm512_max_ps(a, b); }
    static V min_fast(V a, V b) { return _mm512_min_ps(a, b); }
    static V clamp(V v, V lo, V hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }

    static float hsum(V v) { return _mm512_reduce_add_ps(v); }
    static double hsum_double(V v) {
        const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
        return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_cvtps_pd(hi)));
    }
    using D = __m512d;
    static D dzero() { return _mm512_setzero_pd(); }
    static D dadd(D a, D b) { return _mm512_add_pd(a, b); }
    static D dadd_low(D d, V v) { return _mm512_add_pd(d, _mm512_cvtps_pd(_mm512_castps512_ps256(v))); }
    static D dadd_high(D d, V v) {
        return _mm512_add_pd(d, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    static double dsum(D d) { return _mm512_reduce_add_pd(d); }
    static float hmax(V v) { return _mm512_reduce_max_ps(v); }

    // Unpacklo/hi of floats, then of float pairs, then two rounds of 128-bit lane shuffles.
    static void transpose(V (&r)[16]) {
        V a[16], b[16];
        for (int i = 0; i < 8; ++i) {
            a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        // b[4 i + q], 128-bit lane l: rows 4i..4i+3 of column 4 l + q.
        for (int i = 0; i < 4; ++i) {
            const __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
            const __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
            b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
            b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
            b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
            b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
        }
        // Column 4 l + q gathers lane l of b[q], b[4 + q], b[8 + q], b[12 + q].
        for (int q = 0; q < 4; ++q) {
            const V d0 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0x88), d1 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0xdd);
            const V d2 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0x88);
            const V d3 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0xdd);
            r[q] = _mm512_shuffle_f32x4(d0, d2, 0x88);
            r[8 + q] = _mm512_shuffle_f32x4(d0, d2, 0xdd);
            r[4 + q] = _mm512_shuffle_f32x4(d1, d3, 0x88);
            r[12 + q] = _mm512_shuffle_f32x4(d1, d3, 0xdd);
        }
    }
};

}  // namespace
}  // namespace flexpipe
