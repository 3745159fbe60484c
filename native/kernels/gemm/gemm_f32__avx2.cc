// SPDX-License-Identifier: Apache-2.0
// The AVX2 + FMA GEMM kernels beside the 6x16 micro-kernel, gemm_edge_impl.h over VecAvx2: row dots for a
// narrow right edge, the narrow micro-kernel (one 16-row panel = 2 ymm by up to 6 columns, 12
// accumulators: 8 loads per 12 FMAs), its transposing store (8x8 blocks) and the 6-row A-panel packer.
#include "kernels/gemm/gemm_edge_impl.h"
#include "kernels/gemm/pack_a_panels.h"
#include "kernels/simd/vec_avx2.h"

namespace flexpipe {

void gemm_f32_dot__avx2(int64_t rows, int64_t cols, int64_t k, const float* a, int64_t a_rs, const float* bt,
                        float* c, int64_t ldc, const GemmTileParams& p) {
    gemm_dot_vec<VecAvx2>(rows, cols, k, a, a_rs, bt, c, ldc, p);
}

void gemm_f32_narrow__avx2(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate) {
    gemm_narrow_vec<VecAvx2, 6, 1>(panels, cols, kc, a, a_next, b, b_off, t, accumulate);
}

void gemm_f32_narrow_store__avx2(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                 float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    gemm_narrow_store_vec<VecAvx2>(rows, cols, t, bias, add, c, c_rs, clamp, lo, hi);
}

void gemm_pack_a_f32__avx2(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                           float alpha, float* dst) {
    pack_a_full_panels<6>(mr, rows, kc, a, a_rs, a_cs, alpha, dst, gemm_pack_panel<VecAvx2, 6>, gemm_pack_a_f32__ref);
}

}  // namespace flexpipe
