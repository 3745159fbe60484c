// SPDX-License-Identifier: Apache-2.0
// Winograd F(2x2, 3x3) input and output transforms, AVX2 + FMA: 8 lanes = 8 channels of one tile.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_avx2.h"

namespace flexpipe {
namespace {

// d[j] = pixel (y, ix + j), j < 4, of channels 0..7 (lanes), zero outside the image or for channels >= nc.
inline void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc,
                     __m256* d) {
    if (y < 0 || y >= h) {
        for (int j = 0; j < 4; ++j) d[j] = _mm256_setzero_ps();
        return;
    }
    __m128 q[8];
    if (ix >= 0 && ix + 4 <= w) {
        const float* row = x + y * w + ix;
        for (int l = 0; l < 8; ++l) q[l] = l < nc ? _mm_loadu_ps(row + l * plane) : _mm_setzero_ps();
    } else {
        for (int l = 0; l < 8; ++l) {
            alignas(16) float buf[4];
            for (int j = 0; j < 4; ++j) {
                const bool in = l < nc && ix + j >= 0 && ix + j < w;
                buf[j] = in ? x[l * plane + y * w + ix + j] : 0.0f;
            }
            q[l] = _mm_load_ps(buf);
        }
    }
    // Pair channel l with l + 4 in one register, then a 4 x 4 transpose inside each 128-bit half.
    __m256 r[4];
    for (int l = 0; l < 4; ++l) r[l] = _mm256_insertf128_ps(_mm256_castps128_ps256(q[l]), q[l + 4], 1);
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    d[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    d[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    d[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    d[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

}  // namespace

void winograd_f32_f23_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    __m256 t[16];
    for (int i = 0; i < 4; ++i) {
        __m256 d[4];
        load_row(x, plane, h, w, iy + i, ix, nc, d);
        f23_input_1d<Avx2Ops>(d, 1, t + 4 * i, 1);  // t = d B (row i)
    }
    for (int j = 0; j < 4; ++j) {
        __m256 r[4];
        f23_input_1d<Avx2Ops>(t + j, 4, r, 1);  // column j of Bᵀ t
        for (int k = 0; k < 4; ++k) _mm256_storeu_ps(v + (k * 4 + j) * v_stride, r[k]);
    }
}

void winograd_f32_f23_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= 2 && cols >= 1 && cols <= 2 && nc >= 1 && nc <= winograd_lanes);
    __m256 t[8];
    for (int j = 0; j < 4; ++j) {
        __m256 r[4];
        for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_ps(m + (i * 4 + j) * m_stride);
        f23_output_1d<Avx2Ops>(r, 1, t + j, 4);  // column j of t = Aᵀ r (2 x 4)
    }
    alignas(32) float bl[8] = {0};
    for (int l = 0; l < nc && bias; ++l) bl[l] = bias[l];
    const __m256 b = _mm256_load_ps(bl), lo = _mm256_set1_ps(act.lo), hi = _mm256_set1_ps(act.hi);
    for (int k = 0; k < rows; ++k) {
        __m256 o[2];
        f23_output_1d<Avx2Ops>(t + 4 * k, 1, o, 1);  // row k of o = t A
        alignas(32) float px[2][8];
        for (int c = 0; c < 2; ++c) {
            __m256 val = _mm256_add_ps(o[c], b);
            if (act.clamp) val = _mm256_min_ps(hi, _mm256_max_ps(lo, val));  // NaN stays NaN
            _mm256_store_ps(px[c], val);
        }
        float* yr = y + k * w;
        for (int l = 0; l < nc; ++l) {
            yr[l * plane] = px[0][l];
            if (cols == 2) yr[l * plane + 1] = px[1][l];
        }
    }
}

}  // namespace flexpipe
