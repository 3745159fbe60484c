// SPDX-License-Identifier: Apache-2.0
// The max-pool loop shared by the per-dtype reference files (included, not compiled on its own).
#include <limits>

#include "common/macros.h"
#include "kernels/pool/pool.h"

namespace flexpipe {
namespace {

template <typename T>
void maxpool_ref(const PoolShape& s, const T* x, T* y, int64_t* indices, int storage_order,
                 int64_t plane_begin,
                 int64_t plane_end) {
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const T* xp = x + pl * in_plane;
        int64_t o = pl * out_plane;
        for (int64_t od = 0; od < s.out[0]; ++od)
            for (int64_t oh = 0; oh < s.out[1]; ++oh)
                for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) {
                    T best = std::numeric_limits<T>::lowest();
                    int64_t arg = -1;
                    for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                        const int64_t id = od * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                        if (id < 0 || id >= s.in[0]) continue;
                        for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                            const int64_t ih = oh * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                            if (ih < 0 || ih >= s.in[1]) continue;
                            for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                                const int64_t iw = ow * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                                if (iw < 0 || iw >= s.in[2]) continue;
                                const T v = xp[(id * s.in[1] + ih) * s.in[2] + iw];
                                if (arg < 0 || v > best) {
                                    best = v;
                                    arg = storage_order == 0 ? (id * s.in[1] + ih) * s.in[2] + iw
                                                             : id + ih * s.in[0] + iw * s.in[0] * s.in[1];
                                }
                            }
                        }
                    }
                    y[o] = best;
                    if (indices) indices[o] = arg < 0 ? -1 : pl * in_plane + arg;
                }
    }
}

}  // namespace
}  // namespace flexpipe
