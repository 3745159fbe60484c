// SPDX-License-Identifier: Apache-2.0
// The sliding window of convolutions and pools over up to 3 spatial axes, and the walk over its rows.
//
// 1-D and 2-D windows are 3-D with leading unit axes (kernel 1, stride 1, dilation 1, pad 0). Tap t of
// output o along an axis reads input o * stride - pad + t * dilation; taps outside [0, in) read padding.
#pragma once

#include <cstdint>

namespace flexpipe {

struct Window3 {
    int64_t in[3] = {1, 1, 1};
    int64_t out[3] = {1, 1, 1};
    int64_t kernel[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1};
    int64_t dilation[3] = {1, 1, 1};
    int64_t pad[3] = {0, 0, 0};  // padding before each axis (the end padding is implied by out[])
};

// fn(kd, kh, td, th) for the taps (kd, kh) of row (d, h) whose row (td, th) = (d, h) * stride - pad +
// (kd, kh) * dilation lies inside [0, extent) on both axes (rows of padding are skipped), kd outer.
// Convolutions and pools gather an output row from input rows (extent = in); a transposed convolution
// scatters an input row to output rows (extent = out).
template <typename Fn>
inline void window_rows(const Window3& s, const int64_t* extent, int64_t d, int64_t h, Fn&& fn) {
    for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
        const int64_t td = d * s.stride[0] - s.pad[0] + kd * s.dilation[0];
        if (td < 0 || td >= extent[0]) continue;
        for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
            const int64_t th = h * s.stride[1] - s.pad[1] + kh * s.dilation[1];
            if (th < 0 || th >= extent[1]) continue;
            fn(kd, kh, td, th);
        }
    }
}

}  // namespace flexpipe
