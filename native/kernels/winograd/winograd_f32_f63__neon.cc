// SPDX-License-Identifier: Apache-2.0
// Winograd F(6x6, 3x3) input and output transforms, NEON: two passes of 4 lanes = 4 channels of one tile.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/gemm/transpose_neon.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_neon.h"

namespace flexpipe {
namespace {

// d[j] = pixel (y, ix + j), j < 8, of channels 0..3 (lanes), zero outside the image or for channels >= nc.
inline void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc,
                     float32x4_t* d) {
    if (y < 0 || y >= h) {
        for (int j = 0; j < 8; ++j) d[j] = vdupq_n_f32(0.0f);
        return;
    }
    if (ix >= 0 && ix + 8 <= w) {
        const float* row = x + y * w + ix;
        for (int l = 0; l < 4; ++l) {
            d[l] = l < nc ? vld1q_f32(row + l * plane) : vdupq_n_f32(0.0f);
            d[4 + l] = l < nc ? vld1q_f32(row + l * plane + 4) : vdupq_n_f32(0.0f);
        }
    } else {
        for (int l = 0; l < 4; ++l) {
            float buf[8];
            for (int j = 0; j < 8; ++j) {
                const bool in = l < nc && ix + j >= 0 && ix + j < w;
                buf[j] = in ? x[l * plane + y * w + ix + j] : 0.0f;
            }
            d[l] = vld1q_f32(buf);
            d[4 + l] = vld1q_f32(buf + 4);
        }
    }
    transpose_4x4_neon(d);
    transpose_4x4_neon(d + 4);
}

inline float32x4_t bias_act(float32x4_t v, float32x4_t b, const ConvActivation& act) {
    v = vaddq_f32(v, b);
    if (!act.clamp) return v;
    // Compare-and-select keeps NaN (both comparisons are false for it), like the scalar clamp.
    v = vbslq_f32(vcltq_f32(v, vdupq_n_f32(act.lo)), vdupq_n_f32(act.lo), v);
    return vbslq_f32(vcgtq_f32(v, vdupq_n_f32(act.hi)), vdupq_n_f32(act.hi), v);
}

void input_half(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix, int nc, float* v,
                int64_t v_stride) {
    float32x4_t t[64];
    for (int i = 0; i < 8; ++i) {
        float32x4_t d[8];
        load_row(x, plane, h, w, iy + i, ix, nc, d);
        f63_input_1d<NeonOps>(d, 1, t + 8 * i, 1);  // t = d B (row i)
    }
    for (int j = 0; j < 8; ++j) {
        float32x4_t r[8];
        f63_input_1d<NeonOps>(t + j, 8, r, 1);  // column j of Bᵀ t
        for (int k = 0; k < 8; ++k) vst1q_f32(v + (k * 8 + j) * v_stride, r[k]);
    }
}

void output_half(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane, int64_t w,
                 int rows, int cols, int nc, const ConvActivation& act) {
    float32x4_t t[48];
    for (int j = 0; j < 8; ++j) {
        float32x4_t r[8];
        for (int i = 0; i < 8; ++i) r[i] = vld1q_f32(m + (i * 8 + j) * m_stride);
        f63_output_1d<NeonOps>(r, 1, t + j, 8);  // column j of t = Aᵀ r (6 x 8)
    }
    float bl[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int l = 0; l < nc && bias; ++l) bl[l] = bias[l];
    const float32x4_t b = vld1q_f32(bl);
    for (int k = 0; k < rows; ++k) {
        float32x4_t o[8];
        f63_output_1d<NeonOps>(t + 8 * k, 1, o, 1);  // row k of o = t A
        for (int c = 0; c < 6; ++c) o[c] = bias_act(o[c], b, act);
        o[6] = o[7] = vdupq_n_f32(0.0f);
        transpose_4x4_neon(o);      // o[l]: pixels 0..3 of channel l
        transpose_4x4_neon(o + 4);  // o[4 + l]: pixels 4, 5 of channel l
        float* yr = y + k * w;
        for (int l = 0; l < nc; ++l) {
            if (cols == 6) {
                vst1q_f32(yr + l * plane, o[l]);
                vst1_f32(yr + l * plane + 4, vget_low_f32(o[4 + l]));
            } else {
                float buf[8];
                vst1q_f32(buf, o[l]);
                vst1q_f32(buf + 4, o[4 + l]);
                for (int c = 0; c < cols; ++c) yr[l * plane + c] = buf[c];
            }
        }
    }
}

}  // namespace

void winograd_f32_f63_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    input_half(x, plane, h, w, iy, ix, nc < 4 ? nc : 4, v, v_stride);
    const int hi = nc > 4 ? nc - 4 : 0;
    input_half(hi > 0 ? x + 4 * plane : x, plane, h, w, iy, ix, hi, v + 4, v_stride);
}

void winograd_f32_f63_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= 6 && cols >= 1 && cols <= 6 && nc >= 1 && nc <= winograd_lanes);
    output_half(m, m_stride, bias, y, plane, w, rows, cols, nc < 4 ? nc : 4, act);
    if (nc > 4) output_half(m + 4, m_stride, bias ? bias + 4 : nullptr, y + 4 * plane, plane, w, rows, cols, nc - 4, act);
}

}  // namespace flexpipe
