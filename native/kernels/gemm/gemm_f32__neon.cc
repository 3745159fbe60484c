// SPDX-License-Identifier: Apache-2.0
// The NEON GEMM kernels beside the 8x12 micro-kernel, gemm_edge_impl.h over VecNeon: row dots for a narrow
// right edge, the narrow micro-kernel (one 16-row panel = 4 q registers by up to 6 columns, 24
// accumulators: 10 loads per 24 FMAs) and its transposing store (4x4 blocks).
#include "kernels/gemm/gemm_edge_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void gemm_f32_dot__neon(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p) {
    gemm_dot_vec<VecNeon>(rows, cols, k, a, a_rs, bt, c, ldc, p);
}

void gemm_f32_narrow__neon(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate) {
    gemm_narrow_vec<VecNeon, 6, 1>(panels, cols, kc, a, a_next, b, b_off, t, accumulate);
}

void gemm_f32_narrow_store__neon(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    gemm_narrow_store_vec<VecNeon>(rows, cols, t, bias, add, c, c_rs, clamp, lo, hi);
}

}  // namespace flexpipe
