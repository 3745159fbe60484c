// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution, NEON: 4 output columns per step.
//
// Small planes (MobileNet's 7x7 to 112x112) go through a zero-padded copy of the plane on the stack
// (depthwise_padded.h): every output column is then an interior one, with no scalar border pixels
// (on a 7x7 plane those were most of the row), and stride 1 computes two output rows per step from
// four input rows loaded once. Larger planes vectorize the interior in place and compute the borders
// like __ref.
#include <arm_neon.h>

#include <cstring>

#include "common/macros.h"
#include "kernels/depthwise/depthwise_padded.h"

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

// Compare-and-select keeps NaN, like the scalar clamp.
inline float32x4_t clamp4(float32x4_t v, float32x4_t lo, float32x4_t hi) {
    v = vbslq_f32(vcltq_f32(v, lo), lo, v);
    return vbslq_f32(vcgtq_f32(v, hi), hi, v);
}

// Four outputs from input rows in[0..2], each read from its element 0 on (stride 1: 6 floats,
// stride 2: 9); a null row is padding. One accumulator per kernel row: three short FMA chains.
inline float32x4_t step4(const float* const* in, int64_t stride, const float* wc, float b) {
    float32x4_t part[3] = {vdupq_n_f32(b), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (int ky = 0; ky < 3; ++ky) {
        const float* r = in[ky];
        if (!r) continue;
        float32x4_t t0, t1, t2;
        if (stride == 1) {
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
    return vaddq_f32(vaddq_f32(part[0], part[1]), part[2]);
}

// Stride 1: four outputs of two consecutive rows from scratch rows r0 .. r0 + 3, each loaded once.
inline void step4x2(const float* r0, int64_t cols, int64_t first, const float* wc, float b, float32x4_t* top,
                    float32x4_t* bottom) {
    float32x4_t t[3] = {vdupq_n_f32(b), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    float32x4_t u[3] = {vdupq_n_f32(b), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (int iy = 0; iy < 4; ++iy) {
        const float* r = r0 + iy * cols + first;
        const float32x4_t x0 = vld1q_f32(r), x1 = vld1q_f32(r + 1), x2 = vld1q_f32(r + 2);
        if (iy < 3) {  // kernel row iy of the top output row
            t[iy] = vfmaq_n_f32(t[iy], x0, wc[iy * 3]);
            t[iy] = vfmaq_n_f32(t[iy], x1, wc[iy * 3 + 1]);
            t[iy] = vfmaq_n_f32(t[iy], x2, wc[iy * 3 + 2]);
        }
        if (iy > 0) {  // kernel row iy - 1 of the bottom one
            const int ky = iy - 1;
            u[ky] = vfmaq_n_f32(u[ky], x0, wc[ky * 3]);
            u[ky] = vfmaq_n_f32(u[ky], x1, wc[ky * 3 + 1]);
            u[ky] = vfmaq_n_f32(u[ky], x2, wc[ky * 3 + 2]);
        }
    }
    *top = vaddq_f32(vaddq_f32(t[0], t[1]), t[2]);
    *bottom = vaddq_f32(vaddq_f32(u[0], u[1]), u[2]);
}

// Copies row src (w floats) to dst in 4-float steps, the last one overlapping, so only dst[0, w) is
// written; a row narrower than 4 is copied one float at a time.
inline void copy_row(float* dst, const float* src, int64_t w) {
    if (w < 4) {
        for (int64_t i = 0; i < w; ++i) dst[i] = src[i];
        return;
    }
    for (int64_t i = 0; i + 4 <= w; i += 4) vst1q_f32(dst + i, vld1q_f32(src + i));
    if (w % 4) vst1q_f32(dst + w - 4, vld1q_f32(src + w - 4));
}

void depthwise_padded(const DepthwiseShape& s, const PaddedPlane& g, const float* x, const float* w,
                      const float* bias, float* y, const ConvActivation& act, int64_t plane_begin,
                      int64_t plane_end) {
    alignas(16) float pad[PaddedPlane::capacity];
    std::memset(pad, 0, static_cast<size_t>(g.rows * g.cols) * sizeof(float));
    const float32x4_t vlo = vdupq_n_f32(act.lo), vhi = vdupq_n_f32(act.hi);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        padded_copy_in(s, g, xp, pad, copy_row);
        const float* wc = w + c * 9;
        const float b = bias ? bias[c] : 0.0f;
        float* yp = y + p * depthwise_y_plane(s);
        // Stores the four outputs of row oy at column at (see padded_store_whole).
        auto store = [&](int64_t oy, int64_t at, float32x4_t acc) {
            if (act.clamp) acc = clamp4(acc, vlo, vhi);
            float* yr = yp + oy * s.ow;
            if (padded_store_whole<4>(s, oy, at)) {
                vst1q_f32(yr + at, acc);
            } else {
                float lanes[4];
                vst1q_f32(lanes, acc);
                for (int64_t i = 0; i < s.ow; ++i) yr[i] = lanes[i];
            }
        };
        padded_rows<4>(
            s, g, pad,
            [&](const float* r0, int64_t oy, int64_t at) {
                float32x4_t top, bottom;
                step4x2(r0, g.cols, at, wc, b, &top, &bottom);
                store(oy, at, top);
                store(oy + 1, at, bottom);
            },
            [&](const float* r0, int64_t oy, int64_t at) {
                const int64_t first = at * s.stride;
                const float* in[3] = {r0 + first, r0 + g.cols + first, r0 + 2 * g.cols + first};
                store(oy, at, step4(in, s.stride, wc, b));
            });
    }
}

}  // namespace

void depthwise_f32_3x3__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    const PaddedPlane g = padded_plane<4>(s);
    if (g.rows > 0) {
        depthwise_padded(s, g, x, w, bias, y, act, plane_begin, plane_end);
        return;
    }
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
            float* yr = y + p * depthwise_y_plane(s) + oy * s.ow;
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
                const int64_t at = ox * s.stride - s.pad_left;
                const float* in[3] = {rows[0] ? rows[0] + at : nullptr, rows[1] ? rows[1] + at : nullptr,
                                      rows[2] ? rows[2] + at : nullptr};
                float32x4_t acc = step4(in, s.stride, wc, b);
                if (act.clamp) acc = clamp4(acc, vlo, vhi);
                vst1q_f32(yr + ox, acc);
            }
            for (int64_t ox = hi; ox < s.ow; ++ox) yr[ox] = clampf(pixel(s, rows, wc, b, ox), act);
        }
    }
}

}  // namespace flexpipe
