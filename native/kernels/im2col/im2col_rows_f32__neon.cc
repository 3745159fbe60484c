// SPDX-License-Identifier: Apache-2.0
// im2col by rows, NEON (see im2col_rows.h): blocks of 6 output channels x 16 output columns keep 24
// accumulators in registers (of 32); per (c, kh, kw) four unaligned loads of a de-interleaved input row
// feed 24 FMAs with 6 broadcast weights. A last block of fewer than 4 columns is computed whole (the ring
// rows are zero-padded past the output width) and only its valid lanes are stored. Stride-2 rows are
// split into their column phases by de-interleaving loads (gather2).
#include <arm_neon.h>

#include "kernels/im2col/im2col_rows.h"

namespace flexpipe {
namespace {

using RowArgs = RowsBlockArgs;

template <int R, int V>
inline void block(const RowArgs& a, const ConvShape& s, int64_t ow, int tail) {
    const int64_t C = s.in_channels, KH = s.kernel[1], KW = s.kernel[2];
    float32x4_t acc[R][V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = vdupq_n_f32(a.bias ? a.bias[r] : 0.0f);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t t0 = (c * KH + kh) * KW;
            const float* xr = a.rows[c * KH + kh] + ow;
            for (int64_t kw = 0; kw < KW; ++kw) {
                const float* xp = xr + a.koff[kw];
                float32x4_t xv[V];
                for (int v = 0; v < V; ++v) xv[v] = vld1q_f32(xp + 4 * v);
                for (int r = 0; r < R; ++r) {
                    const float32x4_t wv = vld1q_dup_f32(a.w + r * a.T + t0 + kw);
                    for (int v = 0; v < V; ++v) acc[r][v] = vfmaq_f32(acc[r][v], wv, xv[v]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
            float32x4_t o = acc[r][v];
            if (a.clamp) {  // compare-and-select, as the scalar clamp: NaN and -0 pass through
                o = vbslq_f32(vcltq_f32(o, vdupq_n_f32(a.lo)), vdupq_n_f32(a.lo), o);
                o = vbslq_f32(vcgtq_f32(o, vdupq_n_f32(a.hi)), vdupq_n_f32(a.hi), o);
            }
            float* yp = a.y + r * a.plane + ow + 4 * v;
            if (tail == 4) {
                vst1q_f32(yp, o);
            } else {
                float lane[4];
                vst1q_f32(lane, o);
                for (int i = 0; i < tail; ++i) yp[i] = lane[i];
            }
        }
    }
}

template <int R>
void channels(const RowArgs& a, const ConvShape& s) {
    const int64_t OW = s.out[2];
    int64_t ow = 0;
    for (; ow + 16 <= OW; ow += 16) block<R, 4>(a, s, ow, 4);
    for (; ow + 4 <= OW; ow += 4) block<R, 1>(a, s, ow, 4);
    if (ow < OW) block<R, 1>(a, s, ow, static_cast<int>(OW - ow));
}

// d[i] = src[2 i]: vld2q_f32 de-interleaves 8 floats into evens and odds, 4 at a time while the load
// ends before src[2 n - 1] (never read), the rest one by one.
void gather2(float* d, const float* src, int64_t n) {
    int64_t i = 0;
    for (; i + 4 < n; i += 4) vst1q_f32(d + i, vld2q_f32(src + 2 * i).val[0]);
    for (; i < n; ++i) d[i] = src[2 * i];
}

}  // namespace

void im2col_rows_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias,
                           const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    rows_run<6, true>(
        s, x, w, bias, act, y, ring, row_begin, row_end,
        [&](const RowArgs& a, auto r) { channels<decltype(r)::value>(a, s); }, gather2);
}

}  // namespace flexpipe
