// SPDX-License-Identifier: Apache-2.0
// Reference depthwise kh x kw convolution with dilation, float32 (scalar, bounds-checked taps).
#include "common/macros.h"
#include "kernels/depthwise/depthwise.h"

namespace flexpipe {

void depthwise_f32_kxk__ref(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, int64_t plane_begin, int64_t plane_end) {
    FLEXPIPE_DCHECK(s.stride >= 1 && s.dilation >= 1 && s.kh >= 1 && s.kw >= 1);
    const int64_t taps = s.kh * s.kw;
    for (int64_t p = plane_begin; p < plane_end; ++p) {
        const int64_t c = p % s.channels;
        const float* xp = x + p * s.h * s.w;
        const float* wc = w + c * taps;
        float* yp = y + p * depthwise_y_plane(s);
        for (int64_t oy = 0; oy < s.oh; ++oy) {
            for (int64_t ox = 0; ox < s.ow; ++ox) {
                float acc = depthwise_kxk_pixel(s, xp, wc, bias ? bias[c] : 0.0f, oy, ox);
                if (act.clamp) acc = acc < act.lo ? act.lo : (acc > act.hi ? act.hi : acc);
                yp[oy * s.ow + ox] = acc;
            }
        }
    }
}

}  // namespace flexpipe
