// SPDX-License-Identifier: Apache-2.0
// Reference row micro-kernels of the specialised nearest and linear Resize paths (contract in resize.h).
#include "kernels/resize/resize.h"

namespace flexpipe {

void resize_rep_f32__ref(const float* x, float* y, int64_t n, int64_t s) {
    for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < s; ++r) y[j * s + r] = x[j];
}

void resize_gather_f32__ref(const float* x, const int32_t* idx, float* y, int64_t n) {
    for (int64_t o = 0; o < n; ++o) y[o] = x[idx[o]];
}

void resize_lerp_f32__ref(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                          const float* w1, float* y, int64_t n) {
    for (int64_t o = 0; o < n; ++o) y[o] = x[i0[o]] * w0[o] + x[i1[o]] * w1[o];
}

void resize_blend_f32__ref(const float* a, const float* b, float wa, float wb, float* y, int64_t n) {
    for (int64_t o = 0; o < n; ++o) y[o] = a[o] * wa + b[o] * wb;
}

}  // namespace flexpipe
