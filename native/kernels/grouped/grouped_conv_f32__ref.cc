// SPDX-License-Identifier: Apache-2.0
// Reference grouped convolution, float32, on the packed filter (scalar, bounds-checked taps; the scratch
// is not used).
#include "common/macros.h"
#include "kernels/grouped/grouped.h"

namespace flexpipe {

void grouped_conv_f32__ref(const GroupedShape& s, const float* x, const float* w, const float* bias, float* y,
                           const ConvActivation& act, float* /*scratch*/, int64_t item_begin, int64_t item_end) {
    FLEXPIPE_DCHECK(s.stride >= 1 && s.dilation >= 1 && s.kh >= 1 && s.kw >= 1);
    const GroupedGeometry g = grouped_geometry(s);
    const int64_t K = s.cg * s.kh * s.kw, plane = s.h * s.w, out_plane = s.oh * s.ow;
    for (int64_t item = item_begin; item < item_end; ++item) {
        const int64_t ng = item / g.bands, band = item % g.bands;  // ng = n * groups + group
        const int64_t grp = ng % s.groups;
        const float* xg = x + ng * s.cg * plane;
        const int64_t oy0 = band * g.band_rows, oy1 = oy0 + g.band_rows < s.oh ? oy0 + g.band_rows : s.oh;
        for (int64_t m = 0; m < s.mg; ++m) {
            const float* wm = w + grp * K * s.mg + m;  // tap i at wm[i * mg]
            const float b = bias ? bias[grp * s.mg + m] : 0.0f;
            float* ym = y + (ng * s.mg + m) * out_plane;
            for (int64_t oy = oy0; oy < oy1; ++oy) {
                for (int64_t ox = 0; ox < s.ow; ++ox) {
                    float acc = b;
                    for (int64_t c = 0; c < s.cg; ++c) {
                        for (int64_t ky = 0; ky < s.kh; ++ky) {
                            const int64_t iy = oy * s.stride - s.pad_top + ky * s.dilation;
                            if (iy < 0 || iy >= s.h) continue;
                            for (int64_t kx = 0; kx < s.kw; ++kx) {
                                const int64_t ix = ox * s.stride - s.pad_left + kx * s.dilation;
                                if (ix >= 0 && ix < s.w) acc += wm[((c * s.kh + ky) * s.kw + kx) * s.mg] * xg[c * plane + iy * s.w + ix];
                            }
                        }
                    }
                    if (act.clamp) acc = acc < act.lo ? act.lo : (acc > act.hi ? act.hi : acc);
                    ym[oy * s.ow + ox] = acc;
                }
            }
        }
    }
}

}  // namespace flexpipe
