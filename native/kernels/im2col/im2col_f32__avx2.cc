// SPDX-License-Identifier: Apache-2.0
// AVX2 im2col: the copied part of a run moves 8 pixels per step; stride 2 (every network's stem and
// downsampling convolutions) takes the even lanes of two loads.
#include <immintrin.h>

#include "kernels/im2col/im2col_walk.h"

namespace flexpipe {

namespace {

// Lanes 0..7 = r[0], r[2], ..., r[14] (reads r[0..16)).
inline __m256 even_lanes(const float* r) {
    const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
    const __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // r0 r2 r8 r10 | r4 r6 r12 r14
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
}

// Copies d[ow - a] = src[ow * sw + off] for ow from l in 8-pixel steps while they stay in [l, h) and
// inside the row; returns where it stopped.
int64_t copy_inside(float* d, int64_t a, const float* src, int64_t l, int64_t h, int64_t sw, int64_t off, int64_t row_len) {
    int64_t ow = l;
    if (sw == 1) {
        for (; ow + 8 <= h; ow += 8) _mm256_storeu_ps(d + ow - a, _mm256_loadu_ps(src + ow + off));
    } else if (sw == 2) {
        // A step reads src[2 ow + off, 2 ow + off + 16): stay inside the row.
        for (; ow + 8 <= h && 2 * ow + off + 16 <= row_len; ow += 8) _mm256_storeu_ps(d + ow - a, even_lanes(src + 2 * ow + off));
    }
    return ow;
}

}  // namespace

void im2col_f32__avx2(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end) {
    im2col_walk(s, channels, x, p0, p1, nr, col, k_begin, k_end, copy_inside);
}

}  // namespace flexpipe
