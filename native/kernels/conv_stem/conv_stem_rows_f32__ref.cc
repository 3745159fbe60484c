// SPDX-License-Identifier: Apache-2.0
// The stem convolution by rows, scalar reference (conv_stem_rows.h): the same ring of de-interleaved input
// rows as the variants (conv_stem_rows_impl.h), one output value at a time, summed over (c, kh, kw) in
// that order.
#include "kernels/conv_stem/conv_stem_rows_impl.h"

namespace flexpipe {

void conv_stem_rows_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias,
                             const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    const int64_t OH = s.out[1], OW = s.out[2], M = s.out_channels, C = s.in_channels;
    const int64_t KH = s.kernel[1], KW = s.kernel[2], sw = s.stride[2], T = C * KH * KW;
    StemRing rr;
    rr.s = &s;
    rr.buf = ring;
    rr.g = stem_geometry(s);
    int64_t image = -1;
    for (int64_t row = row_begin; row < row_end; ++row) {
        const int64_t n = row / OH, oh = row % OH;
        if (n != image) {
            image = n;
            rr.x = x + n * C * s.in[1] * s.in[2];
            rr.filled = INT64_MIN;
        }
        rr.advance(oh);
        const int64_t ih0 = oh * s.stride[1] - s.pad[1];
        for (int64_t m = 0; m < M; ++m) {
            float* yr = y + ((n * M + m) * OH + oh) * OW;
            const float* wm = w + m * T;
            for (int64_t ow = 0; ow < OW; ++ow) {
                float acc = bias ? bias[m] : 0.0f;
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t kh = 0; kh < KH; ++kh)
                        for (int64_t kw = 0; kw < KW; ++kw)
                            acc += wm[(c * KH + kh) * KW + kw] * rr.phase(c, ih0 + kh, kw % sw)[ow + kw / sw];
                if (act.clamp) acc = acc < act.lo ? act.lo : (acc > act.hi ? act.hi : acc);
                yr[ow] = acc;
            }
        }
    }
}

}  // namespace flexpipe
