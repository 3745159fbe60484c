// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, NEON: 4 output columns per step in the interior of each row.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/depthwise/depthwise.h"

namespace flexpipe {
namespace {

// One output pixel with bounds-checked taps; rows[ky] is null for input rows outside the image.
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

inline float clampf(float v, const ConvActivation& act) {
    return act.clamp ? (v < act.lo ? act.lo : (v > act.hi ? act.hi : v)) : v;
}

}  // namespace

void depthwise_f32_3x3__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    int64_t lo, hi;
    depthwise_interior(s, &lo, &hi);
    const float32x4_t vlo = vdupq_n_f32(act.lo), vhi = vdupq_n_f32(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            const float* rows[3];
            for (int ky = 0; ky < 3; ++ky) {
                const int64_t iy = oy * s.stride - s.pad_top + ky;
                rows[ky] = iy >= 0 && iy < s.h ? xp + iy * s.w : nullptr;
            }
            float* yr = y + p * s.oh * s.ow + oy * s.ow;
            for (int64_t ox = 0; ox < lo; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
            // Interior in steps of 4; the last step overlaps the previous one (outputs are written, not
            // accumulated, so recomputing a few is harmless) instead of a scalar tail.
            for (int64_t ox = lo; ox < hi; ox += 4) {
                if (ox + 4 > hi) {
                    if (hi - lo < 4) {
                        for (; ox < hi; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
                        break;
                    }
                    ox = hi - 4;
                }
                // One accumulator per kernel row: three short FMA chains instead of one of nine.
                float32x4_t part[3] = {vdupq_n_f32(b), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
                for (int ky = 0; ky < 3; ++ky) {
                    if (!rows[ky]) continue;
                    const float* r = rows[ky] + ox * s.stride - s.pad_left;
                    float32x4_t t0, t1, t2;
                    if (s.stride == 1) {
                        t0 = vld1q_f32(r);
                        t1 = vld1q_f32(r + 1);
                        t2 = vld1q_f32(r + 2);
                    } else {  // lanes i: r[2i], r[2i + 1], r[2i + 2] (reads r[0..8])
                        const float32x4x2_t eo = vld2q_f32(r);
                        t0 = eo.val[0];
                        t1 = eo.val[1];
                        t2 = vextq_f32(eo.val[0], vld1q_dup_f32(r + 8), 1);
                    }
                    part[ky] = vfmaq_n_f32(part[ky], t0, wc[ky * 3]);
                    part[ky] = vfmaq_n_f32(part[ky], t1, wc[ky * 3 + 1]);
                    part[ky] = vfmaq_n_f32(part[ky], t2, wc[ky * 3 + 2]);
                }
                float32x4_t acc = vaddq_f32(vaddq_f32(part[0], part[1]), part[2]);
                if (act.clamp) {  // compare-and-select keeps NaN, like the scalar clamp
                    acc = vbslq_f32(vcltq_f32(acc, vlo), vlo, acc);
                    acc = vbslq_f32(vcgtq_f32(acc, vhi), vhi, acc);
                }
                vst1q_f32(yr + ox, acc);
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
        }
    }
}

}  // namespace flexpipe
