// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, AVX2 + FMA: 8 output columns per step in the interior of each row.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/depthwise/depthwise.h"

namespace flexpipe {
namespace {

// One output pixel with bounds-checked taps (borders and the row remainder); rows[ky] is null for
// input rows outside the image.
inline float pixel(const DepthwiseShape& s, const float* const* rows, const float* wc, float b, int64_t ox) {
    float acc = b;
    for (int ky = 0; ky < 3; ++ky) {
        if (!rows[ky]) continue;
        for (int kx = 0; kx < 3; ++kx) {
            const int64_t ix = ox * s.stride - s.pad_left + kx;
            if (ix >= 0 && ix < s.w) acc += wc[ky * 3 + kx] * rows[ky][ix];
        }
    }
    return acc;
}

// Stride 2: lanes i of e0, o1, e2 are r[2i], r[2i + 1], r[2i + 2] for i < 8 (reads r[0..16]).
inline void deinterleave(const float* r, __m256* e0, __m256* o1, __m256* e2) {
    const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
    const __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // r0 r2 r8 r10 | r4 r6 r12 r14
    const __m256 od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    *e0 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
    *o1 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
    const __m256 rot = _mm256_permutevar8x32_ps(*e0, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
    *e2 = _mm256_blend_ps(rot, _mm256_broadcast_ss(r + 16), 0x80);
}

inline float clampf(float v, const ConvActivation& act) {
    return act.clamp ? (v < act.lo ? act.lo : (v > act.hi ? act.hi : v)) : v;
}

}  // namespace

void depthwise_f32_3x3__avx2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    int64_t lo, hi;
    depthwise_interior(s, &lo, &hi);
    const __m256 vlo = _mm256_set1_ps(act.lo), vhi = _mm256_set1_ps(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        __m256 wv[9];
        for (int i = 0; i < 9; ++i) wv[i] = _mm256_set1_ps(wc[i]);
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            const float* rows[3];
            for (int ky = 0; ky < 3; ++ky) {
                const int64_t iy = oy * s.stride - s.pad_top + ky;
                rows[ky] = iy >= 0 && iy < s.h ? xp + iy * s.w : nullptr;
            }
            float* yr = y + p * s.oh * s.ow + oy * s.ow;
            for (int64_t ox = 0; ox < lo; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
            // Interior in steps of 8; the last step overlaps the previous one (outputs are written, not
            // accumulated, so recomputing a few is harmless) instead of a scalar tail.
            for (int64_t ox = lo; ox < hi; ox += 8) {
                if (ox + 8 > hi) {
                    if (hi - lo < 8) {
                        for (; ox < hi; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
                        break;
                    }
                    ox = hi - 8;
                }
                // One accumulator per kernel row: three short FMA chains instead of one of nine.
                __m256 part[3] = {_mm256_set1_ps(b), _mm256_setzero_ps(), _mm256_setzero_ps()};
                for (int ky = 0; ky < 3; ++ky) {
                    if (!rows[ky]) continue;
                    const float* r = rows[ky] + ox * s.stride - s.pad_left;
                    __m256 t0, t1, t2;
                    if (s.stride == 1) {
                        t0 = _mm256_loadu_ps(r);
                        t1 = _mm256_loadu_ps(r + 1);
                        t2 = _mm256_loadu_ps(r + 2);
                    } else {
                        deinterleave(r, &t0, &t1, &t2);
                    }
                    part[ky] = _mm256_fmadd_ps(wv[ky * 3], t0, part[ky]);
                    part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 1], t1, part[ky]);
                    part[ky] = _mm256_fmadd_ps(wv[ky * 3 + 2], t2, part[ky]);
                }
                __m256 acc = _mm256_add_ps(_mm256_add_ps(part[0], part[1]), part[2]);
                if (act.clamp) acc = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));  // NaN stays NaN
                _mm256_storeu_ps(yr + ox, acc);
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
        }
    }
}

}  // namespace flexpipe
