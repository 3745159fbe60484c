// SPDX-License-Identifier: Apache-2.0
// AVX-512F fused 3x3 stride-2 max pool row (contract in kernels/pool/pool.h); the other pool row
// kernels stay AVX2 on AVX-512 machines.
//
// 16 outputs per step. The three input rows are reduced column by column in the __ref order
// (r1 > r0 ? r1 : r0, then r2) over columns 2o .. 2o + 31 as two vectors; a two-source permute splits
// them into the even columns (tap 0 of each output) and the odd ones (tap 1), and tap 2, the evens
// moved on by one, takes its last lane (column 2o + 32) from the first lane of the next step's first
// vector (valignd), which is reduced once and carried over. The taps are then reduced in the __ref
// order, so outputs equal __ref bit for bit (NaN aside, as for the AVX2 variant). Where a vector would
// reach past the 2n + 1 columns the row has, its loads are masked (masked-off lanes are not read and
// feed only outputs that are not stored); the last step's store is masked to the n outputs. A row of
// SqueezeNet's last pool (13 outputs) is one step here against two vector blocks and a scalar output
// in the AVX2 variant.
#include <immintrin.h>

#include "kernels/pool/pool.h"

// GCC 12's _mm512_max_ps passes _mm512_undefined_ps() (a self-initialised variable) as its unused
// merge source, which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace flexpipe {

namespace {

inline __mmask16 first_lanes(int64_t count) {
    return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                       : count <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << count) - 1u);
}

// Columns [c, c + 16) of the three rows reduced in the __ref order; lanes at or past `end` are zero
// and are not read.
inline __m512 rows_max(const float* r0, const float* r1, const float* r2, int64_t c, int64_t end) {
    if (c + 16 <= end) {
        const __m512 v = _mm512_max_ps(_mm512_loadu_ps(r1 + c), _mm512_loadu_ps(r0 + c));
        return _mm512_max_ps(_mm512_loadu_ps(r2 + c), v);
    }
    if (c >= end) return _mm512_setzero_ps();
    const __mmask16 k = first_lanes(end - c);
    const __m512 v = _mm512_max_ps(_mm512_maskz_loadu_ps(k, r1 + c), _mm512_maskz_loadu_ps(k, r0 + c));
    return _mm512_max_ps(_mm512_maskz_loadu_ps(k, r2 + c), v);
}

}  // namespace

void pool_max3x3s2_f32__avx512(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    if (n <= 0) return;
    const int64_t end = 2 * n + 1;  // the window of output n - 1 ends at column 2n
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 v0 = rows_max(r0, r1, r2, 0, end);
    for (int64_t o = 0; o < n; o += 16) {
        const int64_t c = 2 * o;
        const __m512 v1 = rows_max(r0, r1, r2, c + 16, end);
        const __m512 v2 = rows_max(r0, r1, r2, c + 32, end);
        const __m512 tap0 = _mm512_permutex2var_ps(v0, even, v1);
        const __m512 tap1 = _mm512_permutex2var_ps(v0, odd, v1);
        const __m512 tap2 =
            _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v2), _mm512_castps_si512(tap0), 1));
        const __m512 m = _mm512_max_ps(tap2, _mm512_max_ps(tap1, tap0));
        if (o + 16 <= n)
            _mm512_storeu_ps(y + o, m);
        else
            _mm512_mask_storeu_ps(y + o, first_lanes(n - o), m);
        v0 = v2;
    }
}

}  // namespace flexpipe
