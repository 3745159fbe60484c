// SPDX-License-Identifier: Apache-2.0
// Reference direct convolution, float32: row-wise accumulation over contiguous output width.
#include "kernels/conv/conv.h"

#include "common/macros.h"

namespace flexpipe {

// y[r][ow] += w[r * wstride] * x[ow * stride] for r < nb rows of y (nb <= conv_oc_block), ow in [lo, hi).
static inline void axpy_rows(float* const* y, int nb, const float* w, int64_t wstride, const float* x,
                             int64_t stride, int64_t lo, int64_t hi) {
    static_assert(conv_oc_block == 4, "the unrolled path below handles blocks of 4 rows");
    if (nb == conv_oc_block && stride == 1) {
        const float w0 = w[0], w1 = w[wstride], w2 = w[2 * wstride], w3 = w[3 * wstride];
        float* __restrict y0 = y[0];
        float* __restrict y1 = y[1];
        float* __restrict y2 = y[2];
        float* __restrict y3 = y[3];
        for (int64_t o = lo; o < hi; ++o) {
            const float v = x[o];
            y0[o] += w0 * v;
            y1[o] += w1 * v;
            y2[o] += w2 * v;
            y3[o] += w3 * v;
        }
        return;
    }
    for (int r = 0; r < nb; ++r) {
        const float wv = w[r * wstride];
        float* __restrict yr = y[r];
        if (stride == 1) {
            for (int64_t o = lo; o < hi; ++o) yr[o] += wv * x[o];
        } else {
            for (int64_t o = lo; o < hi; ++o) yr[o] += wv * x[o * stride];
        }
    }
}

void conv_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                   int64_t item_begin, int64_t item_end) {
    FLEXPIPE_DCHECK(s.groups > 0 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0);
    const int64_t cin_g = s.in_channels / s.groups;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    const int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2], wstride = cin_g * kvol;
    const int64_t ow_n = s.out[2], s2 = s.stride[2];
    for (int64_t item = item_begin; item < item_end; ++item) {
        const ConvItem it = conv_item(s, item);
        float* yr[conv_oc_block];
        for (int r = 0; r < it.nb; ++r) {
            yr[r] = y + (it.n * s.out_channels + it.oc0 + r) * out_plane + (it.od * s.out[1] + it.oh) * ow_n;
            const float b = bias ? bias[it.oc0 + r] : 0.0f;
            for (int64_t ow = 0; ow < ow_n; ++ow) yr[r][ow] = b;
        }
        const float* xg = x + (it.n * s.in_channels + it.g * cin_g) * in_plane;
        const float* wo = w + it.oc0 * wstride;
        for (int64_t ic = 0; ic < cin_g; ++ic) {
            window_rows(s, s.in, it.od, it.oh, [&](int64_t kd, int64_t kh, int64_t id, int64_t ih) {
                const float* xr = xg + ic * in_plane + (id * s.in[1] + ih) * s.in[2];
                const float* wr = wo + ic * kvol + (kd * s.kernel[1] + kh) * s.kernel[2];
                for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    const int64_t off = kw * s.dilation[2] - s.pad[2];  // iw = ow * s2 + off
                    int64_t lo, hi;
                    conv_valid_range(off, s2, s.in[2], ow_n, &lo, &hi);
                    if (lo < hi) axpy_rows(yr, it.nb, wr + kw, wstride, xr + off, s2, lo, hi);
                }
            });
        }
    }
}

void conv_transpose_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                             int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.groups > 0 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0);
    const int64_t cin_g = s.in_channels / s.groups, cout_g = s.out_channels / s.groups;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    const int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2];
    const int64_t s2 = s.stride[2];
    for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
        const int64_t oc = plane % s.out_channels, n = plane / s.out_channels;
        const int64_t g = oc / cout_g, ocg = oc % cout_g;
        float* yp = y + plane * out_plane;
        const float b = bias ? bias[oc] : 0.0f;
        for (int64_t i = 0; i < out_plane; ++i) yp[i] = b;
        for (int64_t icg = 0; icg < cin_g; ++icg) {
            const int64_t ic = g * cin_g + icg;
            const float* xc = x + (n * s.in_channels + ic) * in_plane;
            const float* wc = w + (ic * cout_g + ocg) * kvol;
            for (int64_t id = 0; id < s.in[0]; ++id) {
                for (int64_t ih = 0; ih < s.in[1]; ++ih) {
                    const float* xr = xc + (id * s.in[1] + ih) * s.in[2];
                    window_rows(s, s.out, id, ih, [&](int64_t kd, int64_t kh, int64_t od, int64_t oh) {
                        float* yr = yp + (od * s.out[1] + oh) * s.out[2];
                        const float* wr = wc + (kd * s.kernel[1] + kh) * s.kernel[2];
                        for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                            const int64_t off = kw * s.dilation[2] - s.pad[2];  // ow = iw * s2 + off
                            int64_t lo, hi;
                            conv_valid_range(off, s2, s.out[2], s.in[2], &lo, &hi);
                            const float wv = wr[kw];
                            for (int64_t iw = lo; iw < hi; ++iw) yr[iw * s2 + off] += wv * xr[iw];
                        }
                    });
                }
            }
        }
    }
}

}  // namespace flexpipe
