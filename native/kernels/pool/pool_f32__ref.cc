// SPDX-License-Identifier: Apache-2.0
// Reference float32 pooling: average, Lp, and the global variants (max: maxpool__ref.cc).
#include <cmath>

#include "kernels/pool/pool.h"
#include "kernels/reduce/reduce_impl.h"

namespace flexpipe {

// mode 0: average, mode 1: Lp with exponent p.
static void sum_pool(const PoolShape& s, const float* x, float* y, int mode, bool count_include_pad, double p,
                     int64_t plane_begin, int64_t plane_end) {
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const float* xp = x + pl * in_plane;
        float* yp = y + pl * out_plane;
        for (int64_t od = 0; od < s.out[0]; ++od)
            for (int64_t oh = 0; oh < s.out[1]; ++oh)
                for (int64_t ow = 0; ow < s.out[2]; ++ow) {
                    const int64_t o3[3] = {od, oh, ow};
                    int64_t inside = 1, padded = 1;  // taps inside [0, in) and inside [-pad, in + pad_end)
                    for (int a = 0; a < 3; ++a) {
                        int64_t ni = 0, np = 0;
                        for (int64_t t = 0; t < s.kernel[a]; ++t) {
                            const int64_t i = o3[a] * s.stride[a] - s.pad[a] + t * s.dilation[a];
                            ni += i >= 0 && i < s.in[a];
                            np += i >= -s.pad[a] && i < s.in[a] + s.pad_end[a];
                        }
                        inside *= ni;
                        padded *= np;
                    }
                    double acc = 0.0;
                    window_rows(s, s.in, od, oh, [&](int64_t, int64_t, int64_t id, int64_t ih) {
                        const float* xr = xp + (id * s.in[1] + ih) * s.in[2];
                        for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                            const int64_t iw = ow * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                            if (iw < 0 || iw >= s.in[2]) continue;
                            acc += mode == 0 ? xr[iw] : std::pow(std::fabs(static_cast<double>(xr[iw])), p);
                        }
                    });
                    const int64_t count = count_include_pad ? padded : inside;
                    float v;
                    if (mode == 0) {
                        v = count > 0 ? static_cast<float>(acc / static_cast<double>(count)) : 0.0f;
                    } else {
                        v = static_cast<float>(std::pow(acc, 1.0 / p));
                    }
                    yp[(od * s.out[1] + oh) * s.out[2] + ow] = v;
                }
    }
}

void avgpool_f32__ref(const PoolShape& s, const float* x, float* y, bool count_include_pad,
                      int64_t plane_begin,
                      int64_t plane_end) {
    sum_pool(s, x, y, 0, count_include_pad, 1.0, plane_begin, plane_end);
}

void lppool_f32__ref(const PoolShape& s, const float* x, float* y, double p, int64_t plane_begin,
                     int64_t plane_end) {
    sum_pool(s, x, y, 1, false, p, plane_begin, plane_end);
}

void global_avgpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end) {
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const float* xp = x + pl * size;
        const double acc = reduce_ref::sum_contiguous(xp, size);  // four partial sums in double
        y[pl] = size > 0 ? static_cast<float>(acc / static_cast<double>(size)) : 0.0f;
    }
}

void global_maxpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end) {
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const float* xp = x + pl * size;
        float best = size > 0 ? xp[0] : 0.0f;
        for (int64_t i = 1; i < size; ++i) best = xp[i] > best ? xp[i] : best;
        y[pl] = best;
    }
}

void global_lppool_f32__ref(const float* x, float* y, int64_t size, double p, int64_t plane_begin,
                            int64_t plane_end) {
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const float* xp = x + pl * size;
        double acc = 0.0;
        for (int64_t i = 0; i < size; ++i) acc += std::pow(std::fabs(static_cast<double>(xp[i])), p);
        y[pl] = static_cast<float>(std::pow(acc, 1.0 / p));
    }
}

}  // namespace flexpipe
