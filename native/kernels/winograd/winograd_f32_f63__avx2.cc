// SPDX-License-Identifier: Apache-2.0
// Winograd F(6x6, 3x3) input and output transforms, AVX2 + FMA: 8 lanes = 8 channels of one tile.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_avx2.h"

namespace flexpipe {
namespace {

// In-register 8 x 8 transpose: r[i] lane j becomes r[j] lane i.
inline void transpose8(__m256* r) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// d[j] = pixel (y, ix + j) of channels 0..7 (lanes), zero outside the image or for channels >= nc.
inline void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc,
                     __m256* d) {
    if (y < 0 || y >= h) {
        for (int j = 0; j < 8; ++j) d[j] = _mm256_setzero_ps();
        return;
    }
    if (ix >= 0 && ix + 8 <= w) {
        const float* row = x + y * w + ix;
        for (int l = 0; l < 8; ++l) d[l] = l < nc ? _mm256_loadu_ps(row + l * plane) : _mm256_setzero_ps();
    } else {
        alignas(32) float buf[8][8];
        for (int l = 0; l < 8; ++l) {
            for (int j = 0; j < 8; ++j) {
                const bool in = l < nc && ix + j >= 0 && ix + j < w;
                buf[l][j] = in ? x[l * plane + y * w + ix + j] : 0.0f;
            }
            d[l] = _mm256_load_ps(buf[l]);
        }
    }
    transpose8(d);
}

inline __m256 bias_act(__m256 v, __m256 b, const ConvActivation& act, __m256 lo, __m256 hi) {
    v = _mm256_add_ps(v, b);
    // max(lo, v) and min(hi, v) return v when it is NaN (second operand), like the scalar clamp.
    if (act.clamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    return v;
}

}  // namespace

void winograd_f32_f63_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    __m256 t[64];
    for (int i = 0; i < 8; ++i) {
        __m256 d[8];
        load_row(x, plane, h, w, iy + i, ix, nc, d);
        f63_input_1d<Avx2Ops>(d, 1, t + 8 * i, 1);  // t = d B (row i)
    }
    for (int j = 0; j < 8; ++j) {
        __m256 r[8];
        f63_input_1d<Avx2Ops>(t + j, 8, r, 1);  // column j of Bᵀ t
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(v + (k * 8 + j) * v_stride, r[k]);
    }
}

void winograd_f32_f63_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= 6 && cols >= 1 && cols <= 6 && nc >= 1 && nc <= winograd_lanes);
    __m256 t[48];
    for (int j = 0; j < 8; ++j) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(m + (i * 8 + j) * m_stride);
        f63_output_1d<Avx2Ops>(r, 1, t + j, 8);  // column j of t = Aᵀ r (6 x 8)
    }
    alignas(32) float bl[8] = {0};
    for (int l = 0; l < nc && bias; ++l) bl[l] = bias[l];
    const __m256 b = _mm256_load_ps(bl), lo = _mm256_set1_ps(act.lo), hi = _mm256_set1_ps(act.hi);
    for (int k = 0; k < rows; ++k) {
        __m256 o[8];
        f63_output_1d<Avx2Ops>(t + 8 * k, 1, o, 1);  // row k of o = t A
        for (int c = 0; c < 6; ++c) o[c] = bias_act(o[c], b, act, lo, hi);
        o[6] = o[7] = _mm256_setzero_ps();
        transpose8(o);  // o[l] = row k of channel l
        float* yr = y + k * w;
        if (cols == 6) {
            for (int l = 0; l < nc; ++l) {
                _mm_storeu_ps(yr + l * plane, _mm256_castps256_ps128(o[l]));
                _mm_storel_pi(reinterpret_cast<__m64*>(yr + l * plane + 4), _mm256_extractf128_ps(o[l], 1));
            }
        } else {
            for (int l = 0; l < nc; ++l) {
                alignas(32) float buf[8];
                _mm256_store_ps(buf, o[l]);
                for (int c = 0; c < cols; ++c) yr[l * plane + c] = buf[c];
            }
        }
    }
}

}  // namespace flexpipe
