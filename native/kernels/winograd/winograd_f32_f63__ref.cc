// SPDX-License-Identifier: Apache-2.0
// Reference Winograd F(6x6, 3x3) transforms, float32 (scalar; the filter transform runs at plan time).
#include "common/macros.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {

// 1-D filter transform u = G g (8 x 3), in double:
//   G = [1 0 0; -2/9 -2/9 -2/9; -2/9 2/9 -2/9; 1/90 1/45 2/45; 1/90 -1/45 2/45;
//        1/45 1/90 1/180; 1/45 -1/90 1/180; 0 0 1]
// (rows 5 and 6 are the points ±1/2 scaled by 1/32; Aᵀ's columns 5 and 6 carry the factor 32 back).
static void filter_1d(const double* g, int64_t gs, double* u, int64_t us) {
    const double g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
    u[0] = g0;
    u[us] = -2.0 / 9 * (g0 + g1 + g2);
    u[2 * us] = -2.0 / 9 * (g0 - g1 + g2);
    u[3 * us] = g0 / 90 + g1 / 45 + g2 * 2 / 45;
    u[4 * us] = g0 / 90 - g1 / 45 + g2 * 2 / 45;
    u[5 * us] = g0 / 45 + g1 / 90 + g2 / 180;
    u[6 * us] = g0 / 45 - g1 / 90 + g2 / 180;
    u[7 * us] = g2;
}

void winograd_f32_f63_filter__ref(const float* w, int64_t M, int64_t C, float* u) {
    const int64_t panels = (M + winograd_nr - 1) / winograd_nr;
    for (int64_t i = 0; i < 64 * panels * C * winograd_nr; ++i) u[i] = 0.0f;
    for (int64_t oc = 0; oc < M; ++oc) {
        for (int64_t c = 0; c < C; ++c) {
            double g[9], t[8 * 3], r[64];
            for (int i = 0; i < 9; ++i) g[i] = w[(oc * C + c) * 9 + i];
            for (int j = 0; j < 3; ++j) filter_1d(g + j, 3, t + j, 3);   // t = G g      (8 x 3)
            for (int k = 0; k < 8; ++k) filter_1d(t + 3 * k, 1, r + 8 * k, 1);  // r = t Gᵀ  (8 x 8)
            for (int xi = 0; xi < 64; ++xi) {
                u[(((oc / winograd_nr) * 64 + xi) * C + c) * winograd_nr + oc % winograd_nr] =
                    static_cast<float>(r[xi]);
            }
        }
    }
}

void winograd_f32_f63_input__ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride) {
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    for (int l = 0; l < winograd_lanes; ++l) {
        float d[64], t[64], r[64];
        for (int i = 0; i < 8; ++i) {
            for (int j = 0; j < 8; ++j) {
                const int64_t y = iy + i, xx = ix + j;
                const bool in = l < nc && y >= 0 && y < h && xx >= 0 && xx < w;
                d[i * 8 + j] = in ? x[l * plane + y * w + xx] : 0.0f;
            }
        }
        for (int i = 0; i < 8; ++i) f63_input_1d<ScalarOps>(d + 8 * i, 1, t + 8 * i, 1);  // t = d B (rows)
        for (int j = 0; j < 8; ++j) f63_input_1d<ScalarOps>(t + j, 8, r + j, 8);  // r = Bᵀ t (columns)
        for (int xi = 0; xi < 64; ++xi) v[xi * v_stride + l] = r[xi];
    }
}

void winograd_f32_f63_output__ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= 6 && cols >= 1 && cols <= 6 && nc >= 1 && nc <= winograd_lanes);
    for (int l = 0; l < nc; ++l) {
        float r[64], t[48], o[36];
        for (int xi = 0; xi < 64; ++xi) r[xi] = m[xi * m_stride + l];
        for (int j = 0; j < 8; ++j) f63_output_1d<ScalarOps>(r + j, 8, t + j, 8);  // t = Aᵀ r (columns, 6 x 8)
        for (int k = 0; k < 6; ++k) f63_output_1d<ScalarOps>(t + 8 * k, 1, o + 6 * k, 1);  // o = t A (rows)
        const float b = bias ? bias[l] : 0.0f;
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < cols; ++j) {
                float val = o[i * 6 + j] + b;
                if (act.clamp) val = val < act.lo ? act.lo : (val > act.hi ? act.hi : val);
                y[l * plane + i * w + j] = val;
            }
        }
    }
}

}  // namespace flexpipe
