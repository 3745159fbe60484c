// SPDX-License-Identifier: Apache-2.0
// Element-wise stage of Winograd convolution, NEON: a 6 x 16 register block (24 accumulators).
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/winograd/winograd.h"

namespace flexpipe {

// Per input channel c: four loads of the U panel row (16 output channels), six load-and-duplicate of the
// V values of six tiles, 24 FMAs (30 of the 32 vector registers live). Rows past `rows` reuse the last
// valid row and are not stored.
void winograd_f32_6x16__neon(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                             int64_t d_stride, int rows) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    const float* ar[6];
    ar[0] = a;
    for (int i = 1; i < 6; ++i) ar[i] = i < rows ? ar[i - 1] + a_stride : ar[i - 1];
    float32x4_t acc[6][4];
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = vdupq_n_f32(0.0f);
    for (int64_t c = 0; c < k; ++c) {
        const float* bc = b + c * winograd_nr;
        const float32x4_t b0 = vld1q_f32(bc), b1 = vld1q_f32(bc + 4), b2 = vld1q_f32(bc + 8);
        const float32x4_t b3 = vld1q_f32(bc + 12);
        for (int i = 0; i < 6; ++i) {
            const float32x4_t av = vld1q_dup_f32(ar[i] + c);
            acc[i][0] = vfmaq_f32(acc[i][0], av, b0);
            acc[i][1] = vfmaq_f32(acc[i][1], av, b1);
            acc[i][2] = vfmaq_f32(acc[i][2], av, b2);
            acc[i][3] = vfmaq_f32(acc[i][3], av, b3);
        }
    }
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < 4; ++j) vst1q_f32(d + i * d_stride + 4 * j, acc[i][j]);
}

}  // namespace flexpipe
