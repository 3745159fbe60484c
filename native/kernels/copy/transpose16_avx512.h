// SPDX-License-Identifier: Apache-2.0
// A 16x16 float transpose in AVX-512F registers, for the kernels that turn 16 rows of 16 into 16
// columns: the narrow GEMM's store epilogue (Cᵀ tiles to rows of C) and the depthwise convolution's
// channel blocks (16 planes' rows to 16-channel pixels and back). Include only from __avx512.cc files.
// Unpacklo/hi of floats, then of float pairs, then two rounds of 128-bit lane shuffles.
#pragma once

#include <immintrin.h>

namespace flexpipe {

// r[j] (j < 16) = column j of a 16x16 block -> r[i] = row i. (A transpose is its own inverse: rows in,
// columns out, too.)
__attribute__((always_inline)) inline void transpose16(__m512 (&r)[16]) {
    __m512 a[16], b[16];
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
        const __m512 d0 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0x88), d1 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0xdd);
        const __m512 d2 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0x88);
        const __m512 d3 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0xdd);
        r[q] = _mm512_shuffle_f32x4(d0, d2, 0x88);
        r[8 + q] = _mm512_shuffle_f32x4(d0, d2, 0xdd);
        r[4 + q] = _mm512_shuffle_f32x4(d1, d3, 0x88);
        r[12 + q] = _mm512_shuffle_f32x4(d1, d3, 0xdd);
    }
}

}  // namespace flexpipe
