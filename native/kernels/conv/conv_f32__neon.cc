// SPDX-License-Identifier: Apache-2.0
// Direct convolution, NEON: per work item (one output row of up to 4 channels), blocks of 8 and 4
// output columns accumulate over every (input channel, tap) in registers and are stored once; columns
// whose taps reach into the padding are computed one by one, like __ref.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/conv/conv.h"

namespace flexpipe {
namespace {

struct Row {
    const ConvShape* s;
    const float* xg;  // first input channel plane of the group (image n)
    const float* wo;  // weights of the first output channel of the block
    int64_t od, oh, wstride, in_plane;
    const float *x, *w, *bias;  // the kernel's arguments, for handing item `item` to __ref
    float* y;
    int64_t item;
};

// 4 inputs x[i * stride] for i < 4, reading no element outside them.
inline float32x4_t load4(const float* x, int64_t stride) {
    if (stride == 1) return vld1q_f32(x);
    if (stride == 2) {  // x[0..3] and x[3..6]: lanes 0, 2 of the first and 1, 3 of the second
        const float32x4_t a = vld1q_f32(x), b = vld1q_f32(x + 3);
        return vcombine_f32(vget_low_f32(vuzp1q_f32(a, a)), vget_low_f32(vuzp2q_f32(b, b)));
    }
    float32x4_t v = vdupq_n_f32(x[0]);
    v = vld1q_lane_f32(x + stride, v, 1);
    v = vld1q_lane_f32(x + 2 * stride, v, 2);
    return vld1q_lane_f32(x + 3 * stride, v, 3);
}

// Output columns [ow, ow + 4 * V) of NB channels, every tap inside the row: acc = bias + sum x * w.
template <int NB, int V>
void block(const Row& r, const float* bias, float* const* yr, int64_t ow) {
    const ConvShape& s = *r.s;
    float32x4_t acc[NB][V];
    for (int i = 0; i < NB; ++i)
        for (int v = 0; v < V; ++v) acc[i][v] = vdupq_n_f32(bias ? bias[i] : 0.0f);
    const int64_t cin = r.wstride / (s.kernel[0] * s.kernel[1] * s.kernel[2]), sw = s.stride[2];
    for (int64_t ic = 0; ic < cin; ++ic) {
        for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
            const int64_t id = r.od * s.stride[0] - s.pad[0] + kd * s.dilation[0];
            if (id < 0 || id >= s.in[0]) continue;
            for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                const int64_t ih = r.oh * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                if (ih < 0 || ih >= s.in[1]) continue;
                const float* xr = r.xg + ic * r.in_plane + (id * s.in[1] + ih) * s.in[2];
                const float* wr = r.wo + ((ic * s.kernel[0] + kd) * s.kernel[1] + kh) * s.kernel[2];
                for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    const float* xp = xr + ow * sw + kw * s.dilation[2] - s.pad[2];
                    float32x4_t xv[V];
                    for (int v = 0; v < V; ++v) xv[v] = load4(xp + 4 * v * sw, sw);
                    for (int i = 0; i < NB; ++i) {
                        const float wv = wr[i * r.wstride + kw];
                        for (int v = 0; v < V; ++v) acc[i][v] = vfmaq_n_f32(acc[i][v], xv[v], wv);
                    }
                }
            }
        }
    }
    for (int i = 0; i < NB; ++i)
        for (int v = 0; v < V; ++v) vst1q_f32(yr[i] + ow + 4 * v, acc[i][v]);
}

// One output column with bounds-checked taps (the padding borders).
void column(const Row& r, int nb, const float* bias, float* const* yr, int64_t ow) {
    const ConvShape& s = *r.s;
    const int64_t cin = r.wstride / (s.kernel[0] * s.kernel[1] * s.kernel[2]);
    for (int i = 0; i < nb; ++i) {
        float acc = bias ? bias[i] : 0.0f;
        for (int64_t ic = 0; ic < cin; ++ic) {
            for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                const int64_t id = r.od * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                if (id < 0 || id >= s.in[0]) continue;
                for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                    const int64_t ih = r.oh * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                    if (ih < 0 || ih >= s.in[1]) continue;
                    const float* xr = r.xg + ic * r.in_plane + (id * s.in[1] + ih) * s.in[2];
                    const float* wr = r.wo + i * r.wstride + ((ic * s.kernel[0] + kd) * s.kernel[1] + kh) * s.kernel[2];
                    for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                        const int64_t iw = ow * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                        if (iw >= 0 && iw < s.in[2]) acc += wr[kw] * xr[iw];
                    }
                }
            }
        }
        yr[i][ow] = acc;
    }
}

template <int NB>
void row(const Row& r, const float* bias, float* const* yr) {
    const ConvShape& s = *r.s;
    // Columns whose taps all lie in the row: ow * sw + off in [0, in) for off in [-pad, last tap].
    const int64_t sw = s.stride[2], first = s.pad[2], last = (s.kernel[2] - 1) * s.dilation[2] - s.pad[2];
    int64_t lo = (first + sw - 1) / sw;
    int64_t hi = s.in[2] - 1 - last < 0 ? 0 : (s.in[2] - 1 - last) / sw + 1;
    if (hi > s.out[2]) hi = s.out[2];
    if (lo > hi) lo = hi;
    if (hi - lo < 4) {  // no full block: the reference's row sweeps are faster than column by column
        conv_f32__ref(s, r.x, r.w, r.bias, r.y, r.item, r.item + 1);
        return;
    }
    int64_t ow = 0;
    for (; ow < lo; ++ow) column(r, NB, bias, yr, ow);
    for (; ow + 8 <= hi; ow += 8) block<NB, 2>(r, bias, yr, ow);
    for (; ow + 4 <= hi; ow += 4) block<NB, 1>(r, bias, yr, ow);
    if (ow < hi && hi - lo >= 4) {  // the tail as one block overlapping the previous (outputs are stored, not added)
        block<NB, 1>(r, bias, yr, hi - 4);
        ow = hi;
    }
    for (; ow < s.out[2]; ++ow) column(r, NB, bias, yr, ow);
}

}  // namespace

void conv_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    int64_t item_begin, int64_t item_end) {
    FLEXPIPE_DCHECK(s.groups > 0 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0);
    const int64_t cin_g = s.in_channels / s.groups, cout_g = s.out_channels / s.groups;
    const int64_t blocks = (cout_g + conv_oc_block - 1) / conv_oc_block;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    const int64_t wstride = cin_g * s.kernel[0] * s.kernel[1] * s.kernel[2];
    for (int64_t item = item_begin; item < item_end; ++item) {
        const int64_t oh = item % s.out[1];
        const int64_t od = (item / s.out[1]) % s.out[0];
        const int64_t blk = (item / (s.out[1] * s.out[0])) % blocks;
        const int64_t g = (item / (s.out[1] * s.out[0] * blocks)) % s.groups;
        const int64_t n = item / (s.out[1] * s.out[0] * blocks * s.groups);
        const int64_t oc0 = g * cout_g + blk * conv_oc_block;
        const int64_t left = cout_g - blk * conv_oc_block;
        const int nb = static_cast<int>(left < conv_oc_block ? left : conv_oc_block);
        float* yr[conv_oc_block];
        for (int r = 0; r < nb; ++r) yr[r] = y + (n * s.out_channels + oc0 + r) * out_plane + (od * s.out[1] + oh) * s.out[2];
        const Row r{&s, x + (n * s.in_channels + g * cin_g) * in_plane, w + oc0 * wstride, od, oh, wstride, in_plane,
                    x, w, bias, y, item};
        const float* b = bias ? bias + oc0 : nullptr;
        switch (nb) {
            case 1: row<1>(r, b, yr); break;
            case 2: row<2>(r, b, yr); break;
            case 3: row<3>(r, b, yr); break;
            default: row<4>(r, b, yr); break;
        }
    }
}

}  // namespace flexpipe
