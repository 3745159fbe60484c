// SPDX-License-Identifier: Apache-2.0
// A and B panel packers of the packed-panel GEMM for any tile size (layouts in gemm.h).
#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

// A last partial panel is zero-padded. Row-major A (a_cs == 1) reads each row contiguously and
// scatters it with stride mr into the panel; column-major A (a_rs == 1: Aᵀ operands, NCHW 1x1
// convolutions) copies mr contiguous floats per k.
void gemm_pack_a_f32__ref(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                          float alpha, float* dst) {
    FLEXPIPE_DCHECK(mr >= 1 && rows >= 0 && kc >= 0);
    for (int64_t r0 = 0; r0 < rows; r0 += mr, dst += mr * kc) {
        const int64_t n = rows - r0 < mr ? rows - r0 : mr;
        if (a_rs == 1 && a_cs != 1) {
            for (int64_t k = 0; k < kc; ++k)
                for (int64_t i = 0; i < n; ++i) dst[k * mr + i] = alpha * a[r0 + i + k * a_cs];
        } else {
            for (int64_t i = 0; i < n; ++i) {
                const float* src = a + (r0 + i) * a_rs;
                if (a_cs == 1) {
                    for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = alpha * src[k];
                } else {
                    for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = alpha * src[k * a_cs];
                }
            }
        }
        for (int64_t i = n; i < mr; ++i)
            for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = 0.0f;
    }
}

void gemm_pack_b_f32__ref(int64_t nr, int64_t k, int64_t cols, const float* b, int64_t b_rs, int64_t b_cs,
                          float* dst) {
    FLEXPIPE_DCHECK(nr >= 1 && k >= 0 && cols >= 0);
    for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * k) {
        const int64_t n = cols - j0 < nr ? cols - j0 : nr;
        for (int64_t p = 0; p < k; ++p) {
            const float* src = b + p * b_rs + j0 * b_cs;
            float* out = dst + p * nr;
            if (b_cs == 1) {
                for (int64_t j = 0; j < n; ++j) out[j] = src[j];
            } else {
                for (int64_t j = 0; j < n; ++j) out[j] = src[j * b_cs];
            }
            for (int64_t j = n; j < nr; ++j) out[j] = 0.0f;
        }
    }
}

}  // namespace flexpipe
