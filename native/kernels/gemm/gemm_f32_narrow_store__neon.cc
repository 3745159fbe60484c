// SPDX-License-Identifier: Apache-2.0
// NEON epilogue of the narrow GEMM (contract in narrow.h): 4 columns of the Cᵀ tile (4 rows each)
// are one 4x4 block, turned into 4 rows of C by the shared register transpose (transpose_neon.h). A
// block narrower than 4 columns is written lane by lane.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"
#include "kernels/gemm/transpose_neon.h"

namespace flexpipe {

void gemm_f32_narrow_store__neon(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    FLEXPIPE_DCHECK(rows >= 0 && rows <= narrow_ldt && cols >= 0);
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    for (int64_t r0 = 0; r0 < rows; r0 += 4) {
        const int64_t nr = rows - r0 < 4 ? rows - r0 : 4;
        for (int64_t j0 = 0; j0 < cols; j0 += 4) {
            const int64_t nc = cols - j0 < 4 ? cols - j0 : 4;
            float32x4_t v[4];
            for (int j = 0; j < 4; ++j) v[j] = j < nc ? vld1q_f32(t + (j0 + j) * narrow_ldt + r0) : vdupq_n_f32(0.0f);
            transpose_4x4_neon(v);  // v[j] = column j of the block -> v[i] = row i
            for (int64_t i = 0; i < nr; ++i) {
                const int64_t r = r0 + i;
                float* cr = c + r * c_rs + j0;
                float32x4_t x = v[i];
                if (bias) x = vaddq_f32(x, vdupq_n_f32(bias[r]));
                if (nc == 4) {
                    if (add) x = vaddq_f32(x, vld1q_f32(add + r * c_rs + j0));
                    if (clamp) x = vminq_f32(vmaxq_f32(x, vlo), vhi);  // FMAX/FMIN return a NaN operand
                    vst1q_f32(cr, x);
                } else {
                    float lane[4];
                    vst1q_f32(lane, x);
                    for (int64_t j = 0; j < nc; ++j) {
                        float y = lane[j] + (add ? add[r * c_rs + j0 + j] : 0.0f);
                        if (clamp) y = y < lo ? lo : (y > hi ? hi : y);
                        cr[j] = y;
                    }
                }
            }
        }
    }
}

}  // namespace flexpipe
