// SPDX-License-Identifier: Apache-2.0
// Reference max pooling of float32, float64, uint8 and int8 planes: one template on the element type.
#include <limits>

#include "common/macros.h"
#include "kernels/pool/pool.h"

namespace flexpipe {
namespace {

// Taps t of a window starting at input index `start` that land inside [0, in): t in [*t0, *t1).
inline void pool_valid_taps(int64_t start, int64_t k, int64_t dilation, int64_t in, int64_t* t0,
                            int64_t* t1) {
    const int64_t end = start < in ? (in - start + dilation - 1) / dilation : 0;  // first t at or past in
    const int64_t begin = start < 0 ? (-start + dilation - 1) / dilation : 0;     // first t at or past 0
    *t1 = end < k ? end : k;
    *t0 = begin < *t1 ? begin : *t1;
}

template <typename T>
void maxpool_ref(const PoolShape& s, const T* x, T* y, int64_t* indices, int storage_order,
                 int64_t plane_begin, int64_t plane_end) {
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2], out_plane = s.out[0] * s.out[1] * s.out[2];
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const T* xp = x + pl * in_plane;
        int64_t o = pl * out_plane;
        for (int64_t od = 0; od < s.out[0]; ++od) {
            const int64_t sd = od * s.stride[0] - s.pad[0];
            int64_t d0, d1;
            pool_valid_taps(sd, s.kernel[0], s.dilation[0], s.in[0], &d0, &d1);
            for (int64_t oh = 0; oh < s.out[1]; ++oh) {
                const int64_t sh = oh * s.stride[1] - s.pad[1];
                int64_t h0, h1;
                pool_valid_taps(sh, s.kernel[1], s.dilation[1], s.in[1], &h0, &h1);
                for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) {
                    const int64_t sw = ow * s.stride[2] - s.pad[2];
                    int64_t w0, w1;
                    pool_valid_taps(sw, s.kernel[2], s.dilation[2], s.in[2], &w0, &w1);
                    T best = std::numeric_limits<T>::lowest();
                    int64_t arg = -1;
                    for (int64_t kd = d0; kd < d1; ++kd) {
                        const int64_t id = sd + kd * s.dilation[0];
                        for (int64_t kh = h0; kh < h1; ++kh) {
                            const int64_t ih = sh + kh * s.dilation[1];
                            const T* xr = xp + (id * s.in[1] + ih) * s.in[2];
                            for (int64_t kw = w0; kw < w1; ++kw) {
                                const int64_t iw = sw + kw * s.dilation[2];
                                if (arg < 0 || xr[iw] > best) {
                                    best = xr[iw];
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
    }
}

}  // namespace

bool maxpool_dtype_supported(DType t) {
    return t == DType::f32 || t == DType::f64 || t == DType::u8 || t == DType::i8;
}

void maxpool__ref(DType t, const PoolShape& s, const void* x, void* y, int64_t* indices, int storage_order,
                  int64_t plane_begin, int64_t plane_end) {
    auto run = [&](auto v) {
        using T = decltype(v);
        maxpool_ref(s, static_cast<const T*>(x), static_cast<T*>(y), indices, storage_order, plane_begin, plane_end);
    };
    switch (t) {
        case DType::f32: return run(float{});
        case DType::f64: return run(double{});
        case DType::u8: return run(uint8_t{});
        default: return run(int8_t{});
    }
}

}  // namespace flexpipe
