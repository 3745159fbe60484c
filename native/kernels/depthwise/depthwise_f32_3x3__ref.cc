// SPDX-License-Identifier: Apache-2.0
// Reference depthwise 3x3 convolution, float32 (scalar, bounds-checked taps).
#include "common/macros.h"
#include "kernels/depthwise/depthwise.h"

namespace flexpipe {

void depthwise_f32_3x3__ref(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride == 1 || s.stride == 2);
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * 9;
        float* yp = y + p * depthwise_y_plane(s);
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            for (int64_t ox = 0; ox < s.ow; ++ox) {
                float acc = bias ? bias[c] : 0.0f;
                for (int ky = 0; ky < 3; ++ky) {
                    const int64_t iy = oy * s.stride - s.pad_top + ky;
                    if (iy < 0 || iy >= s.h) continue;
                    for (int kx = 0; kx < 3; ++kx) {
                        const int64_t ix = ox * s.stride - s.pad_left + kx;
                        if (ix >= 0 && ix < s.w) acc += wc[ky * 3 + kx] * xp[iy * s.w + ix];
                    }
                }
                if (act.clamp) acc = acc < act.lo ? act.lo : (acc > act.hi ? act.hi : acc);
                yp[oy * s.ow + ox] = acc;
            }
        }
    }
}

}  // namespace flexpipe
