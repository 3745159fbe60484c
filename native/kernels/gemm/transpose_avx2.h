// SPDX-License-Identifier: Apache-2.0
// The 8x8 float transpose in ymm registers that the A-panel packers and attention's key transpose
// share (include only from files built with AVX2 enabled: *__avx2.cc, *__avx512.cc).
#pragma once

#include <immintrin.h>

namespace flexpipe {

// t[k] lane i = r[i] lane k, for i, k < 8: unpack pairs, shuffle quads, swap 128-bit halves.
__attribute__((always_inline)) inline void transpose_8x8_avx2(const __m256 (&r)[8], __m256 (&t)[8]) {
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

}  // namespace flexpipe
