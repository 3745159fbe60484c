// SPDX-License-Identifier: Apache-2.0
// AVX2 A-panel packer for the 6x16 micro-kernel (layout in gemm.h): row-major A is read 8 k-values
// per row at a time and transposed in registers, instead of 6 scalar strided stores per k.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

namespace {

alignas(32) const int32_t first6[8] = {-1, -1, -1, -1, -1, -1, 0, 0};

// Rows r0..r5 (r6, r7 zero) x 8 k-values -> 8 vectors t[k] whose lanes 0..5 are A[0..5, k]
// (the 8x8 transpose: unpack pairs, shuffle quads, swap 128-bit halves).
void transpose_6x8(const __m256 (&r)[8], __m256 (&t)[8]) {
    const __m256 u0 = _mm256_unpacklo_ps(r[0], r[1]), u1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 u2 = _mm256_unpacklo_ps(r[2], r[3]), u3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 u4 = _mm256_unpacklo_ps(r[4], r[5]), u5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 u6 = _mm256_unpacklo_ps(r[6], r[7]), u7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(u0, u2, 0x44), s1 = _mm256_shuffle_ps(u0, u2, 0xee);
    const __m256 s2 = _mm256_shuffle_ps(u1, u3, 0x44), s3 = _mm256_shuffle_ps(u1, u3, 0xee);
    const __m256 s4 = _mm256_shuffle_ps(u4, u6, 0x44), s5 = _mm256_shuffle_ps(u4, u6, 0xee);
    const __m256 s6 = _mm256_shuffle_ps(u5, u7, 0x44), s7 = _mm256_shuffle_ps(u5, u7, 0xee);
    t[0] = _mm256_permute2f128_ps(s0, s4, 0x20), t[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    t[1] = _mm256_permute2f128_ps(s1, s5, 0x20), t[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    t[2] = _mm256_permute2f128_ps(s2, s6, 0x20), t[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    t[3] = _mm256_permute2f128_ps(s3, s7, 0x20), t[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// One full 6-row panel of row-major A: dst[k * 6 + i] = alpha * a[i * a_rs + k].
void pack_panel_6(int64_t kc, const float* a, int64_t a_rs, float alpha, float* dst) {
    const __m256 va = _mm256_set1_ps(alpha);
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(first6));
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r[8], t[8];
        for (int i = 0; i < 6; ++i) r[i] = _mm256_mul_ps(va, _mm256_loadu_ps(a + i * a_rs + k));
        r[6] = r[7] = _mm256_setzero_ps();
        transpose_6x8(r, t);
        float* d = dst + k * 6;
        // Each 8-wide store spills 2 lanes into the next k's slots, which the next store rewrites;
        // the last one is masked so nothing is written past this chunk.
        for (int j = 0; j < 7; ++j) _mm256_storeu_ps(d + j * 6, t[j]);
        _mm256_maskstore_ps(d + 42, mask, t[7]);
    }
    for (; k < kc; ++k)
        for (int i = 0; i < 6; ++i) dst[k * 6 + i] = alpha * a[i * a_rs + k];
}

}  // namespace

void gemm_pack_a_f32__avx2(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                           float alpha, float* dst) {
    FLEXPIPE_DCHECK(mr >= 1 && rows >= 0 && kc >= 0);
    if (mr != 6 || a_cs != 1) {
        gemm_pack_a_f32__ref(mr, rows, kc, a, a_rs, a_cs, alpha, dst);
        return;
    }
    int64_t r0 = 0;
    for (; r0 + 6 <= rows; r0 += 6) pack_panel_6(kc, a + r0 * a_rs, a_rs, alpha, dst + r0 * kc);
    if (r0 < rows) gemm_pack_a_f32__ref(mr, rows - r0, kc, a + r0 * a_rs, a_rs, a_cs, alpha, dst + r0 * kc);
}

}  // namespace flexpipe
