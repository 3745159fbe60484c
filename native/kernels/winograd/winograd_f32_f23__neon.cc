// SPDX-License-Identifier: Apache-2.0
// Winograd F(2x2, 3x3) input and output transforms, NEON: two passes of 4 lanes = 4 channels of one tile.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/gemm/transpose_neon.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_neon.h"

namespace flexpipe {
namespace {

// d[j] = pixel (y, ix + j), j < 4, of channels 0..3 (lanes), zero outside the image or for channels >= nc.
inline void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc,
                     float32x4_t* d) {
    if (y < 0 || y >= h) {
        for (int j = 0; j < 4; ++j) d[j] = vdupq_n_f32(0.0f);
        return;
    }
    for (int l = 0; l < 4; ++l) {
        if (l < nc && ix >= 0 && ix + 4 <= w) {
            d[l] = vld1q_f32(x + l * plane + y * w + ix);
        } else {
            float buf[4];
            for (int j = 0; j < 4; ++j) {
                const bool in = l < nc && ix + j >= 0 && ix + j < w;
                buf[j] = in ? x[l * plane + y * w + ix + j] : 0.0f;
            }
            d[l] = vld1q_f32(buf);
        }
    }
    transpose_4x4_neon(d);
}

void input_half(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix, int nc, float* v,
                int64_t v_stride) {
    float32x4_t t[16];
    for (int i = 0; i < 4; ++i) {
        float32x4_t d[4];
        load_row(x, plane, h, w, iy + i, ix, nc, d);
        f23_input_1d<NeonOps>(d, 1, t + 4 * i, 1);  // t = d B (row i)
    }
    for (int j = 0; j < 4; ++j) {
        float32x4_t r[4];
        f23_input_1d<NeonOps>(t + j, 4, r, 1);  // column j of Bᵀ t
        for (int k = 0; k < 4; ++k) vst1q_f32(v + (k * 4 + j) * v_stride, r[k]);
    }
}

void output_half(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane, int64_t w,
                 int rows, int cols, int nc, const ConvActivation& act) {
    float32x4_t t[8];
    for (int j = 0; j < 4; ++j) {
        float32x4_t r[4];
        for (int i = 0; i < 4; ++i) r[i] = vld1q_f32(m + (i * 4 + j) * m_stride);
        f23_output_1d<NeonOps>(r, 1, t + j, 4);  // column j of t = Aᵀ r (2 x 4)
    }
    float bl[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int l = 0; l < nc && bias; ++l) bl[l] = bias[l];
    const float32x4_t b = vld1q_f32(bl), lo = vdupq_n_f32(act.lo), hi = vdupq_n_f32(act.hi);
    for (int k = 0; k < rows; ++k) {
        float32x4_t o[2];
        f23_output_1d<NeonOps>(t + 4 * k, 1, o, 1);  // row k of o = t A
        float px[2][4];
        for (int c = 0; c < 2; ++c) {
            float32x4_t val = vaddq_f32(o[c], b);
            if (act.clamp) {  // compare-and-select keeps NaN, like the scalar clamp
                val = vbslq_f32(vcltq_f32(val, lo), lo, val);
                val = vbslq_f32(vcgtq_f32(val, hi), hi, val);
            }
            vst1q_f32(px[c], val);
        }
        float* yr = y + k * w;
        for (int l = 0; l < nc; ++l) {
            yr[l * plane] = px[0][l];
            if (cols == 2) yr[l * plane + 1] = px[1][l];
        }
    }
}

}  // namespace

void winograd_f32_f23_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    input_half(x, plane, h, w, iy, ix, nc < 4 ? nc : 4, v, v_stride);
    const int hi = nc > 4 ? nc - 4 : 0;
    input_half(hi > 0 ? x + 4 * plane : x, plane, h, w, iy, ix, hi, v + 4, v_stride);
}

void winograd_f32_f23_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= 2 && cols >= 1 && cols <= 2 && nc >= 1 && nc <= winograd_lanes);
    output_half(m, m_stride, bias, y, plane, w, rows, cols, nc < 4 ? nc : 4, act);
    if (nc > 4) output_half(m + 4, m_stride, bias ? bias + 4 : nullptr, y + 4 * plane, plane, w, rows, cols, nc - 4, act);
}

}  // namespace flexpipe
