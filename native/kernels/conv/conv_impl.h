// SPDX-License-Identifier: Apache-2.0
// The direct convolution of the SIMD variants (conv.h), written once over a vector type (simd/vec.h):
// conv_f32__<isa> is conv_direct<Vec<isa>>.
//
// Per work item (one output row of up to conv_oc_block channels), blocks of 2 L and L output columns
// (L = Vec::lanes) accumulate bias + x * w over every (input channel, tap) in registers, one FMA per tap
// with the weight broadcast, and are stored once; a block's inputs are L columns `stride` apart
// (Vec::load_strided). Columns whose taps reach into the padding are summed one by one like __ref, and a
// row without one full block is handed to __ref (its row sweeps beat column-by-column sums).
#pragma once

#include <cstdint>

#include "common/macros.h"
#include "kernels/conv/conv.h"

namespace flexpipe {
namespace {

struct ConvRow {
    const ConvShape* s;
    const float* xg;  // first input channel plane of the group (image n)
    const float* wo;  // weights of the first output channel of the block
    int64_t od, oh, wstride, in_plane;
    const float *x, *w, *bias;  // the kernel's arguments, for handing item `item` to __ref
    float* y;
    int64_t item;
};

// Output columns [ow, ow + NV L) of NB channels, every tap inside the row: acc = bias + sum x * w.
template <class Vec, int NB, int NV>
void conv_block(const ConvRow& r, const float* bias, float* const* yr, int64_t ow) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const ConvShape& s = *r.s;
    V acc[NB][NV];
    for (int i = 0; i < NB; ++i)
        for (int v = 0; v < NV; ++v) acc[i][v] = Vec::set1(bias ? bias[i] : 0.0f);
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
                    V xv[NV];
                    for (int v = 0; v < NV; ++v) xv[v] = Vec::load_strided(xp + L * v * sw, sw);
                    for (int i = 0; i < NB; ++i) {
                        const V wv = Vec::load1(wr + i * r.wstride + kw);
                        for (int v = 0; v < NV; ++v) acc[i][v] = Vec::fma(wv, xv[v], acc[i][v]);
                    }
                }
            }
        }
    }
    for (int i = 0; i < NB; ++i)
        for (int v = 0; v < NV; ++v) Vec::store(yr[i] + ow + L * v, acc[i][v]);
}

// One output column with bounds-checked taps (the padding borders).
void conv_column(const ConvRow& r, int nb, const float* bias, float* const* yr, int64_t ow) {
    const ConvShape& s = *r.s;
    const int64_t cin = r.wstride / (s.kernel[0] * s.kernel[1] * s.kernel[2]);
    for (int i = 0; i < nb; ++i) {
        float acc = bias ? bias[i] : 0.0f;
        for (int64_t ic = 0; ic < cin; ++ic) {
            window_rows(s, s.in, r.od, r.oh, [&](int64_t kd, int64_t kh, int64_t id, int64_t ih) {
                const float* xr = r.xg + ic * r.in_plane + (id * s.in[1] + ih) * s.in[2];
                const float* wr = r.wo + i * r.wstride + ((ic * s.kernel[0] + kd) * s.kernel[1] + kh) * s.kernel[2];
                for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    const int64_t iw = ow * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                    if (iw >= 0 && iw < s.in[2]) acc += wr[kw] * xr[iw];
                }
            });
        }
        yr[i][ow] = acc;
    }
}

template <class Vec, int NB>
void conv_row(const ConvRow& r, const float* bias, float* const* yr) {
    constexpr int L = Vec::lanes;
    const ConvShape& s = *r.s;
    // Columns whose taps all lie in the row: ow * sw + off in [0, in) for off in [-pad, last tap].
    const int64_t sw = s.stride[2], first = s.pad[2], last = (s.kernel[2] - 1) * s.dilation[2] - s.pad[2];
    int64_t lo = (first + sw - 1) / sw;
    int64_t hi = s.in[2] - 1 - last < 0 ? 0 : (s.in[2] - 1 - last) / sw + 1;
    if (hi > s.out[2]) hi = s.out[2];
    if (lo > hi) lo = hi;
    if (hi - lo < L) {  // no full block: the reference's row sweeps are faster than column by column
        conv_f32__ref(s, r.x, r.w, r.bias, r.y, r.item, r.item + 1);
        return;
    }
    int64_t ow = 0;
    for (; ow < lo; ++ow) conv_column(r, NB, bias, yr, ow);
    for (; ow + 2 * L <= hi; ow += 2 * L) conv_block<Vec, NB, 2>(r, bias, yr, ow);
    for (; ow + L <= hi; ow += L) conv_block<Vec, NB, 1>(r, bias, yr, ow);
    if (ow < hi && hi - lo >= L) {  // the tail as one block overlapping the previous (outputs are stored, not added)
        conv_block<Vec, NB, 1>(r, bias, yr, hi - L);
        ow = hi;
    }
    for (; ow < s.out[2]; ++ow) conv_column(r, NB, bias, yr, ow);
}

template <class Vec>
void conv_direct(const ConvShape& s, const float* x, const float* w, const float* bias, float* y, int64_t item_begin,
                 int64_t item_end) {
    FLEXPIPE_DCHECK(s.groups > 0 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0);
    const int64_t cin_g = s.in_channels / s.groups;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    const int64_t wstride = cin_g * s.kernel[0] * s.kernel[1] * s.kernel[2];
    for (int64_t item = item_begin; item < item_end; ++item) {
        const ConvItem it = conv_item(s, item);
        float* yr[conv_oc_block];
        for (int r = 0; r < it.nb; ++r)
            yr[r] = y + (it.n * s.out_channels + it.oc0 + r) * out_plane + (it.od * s.out[1] + it.oh) * s.out[2];
        const ConvRow r{&s, x + (it.n * s.in_channels + it.g * cin_g) * in_plane, w + it.oc0 * wstride, it.od, it.oh,
                        wstride, in_plane, x, w, bias, y, item};
        const float* b = bias ? bias + it.oc0 : nullptr;
        switch (it.nb) {
            case 1: conv_row<Vec, 1>(r, b, yr); break;
            case 2: conv_row<Vec, 2>(r, b, yr); break;
            case 3: conv_row<Vec, 3>(r, b, yr); break;
            default: conv_row<Vec, 4>(r, b, yr); break;
        }
    }
}

}  // namespace
}  // namespace flexpipe
