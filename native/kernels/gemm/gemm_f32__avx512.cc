// SPDX-License-Identifier: Apache-2.0
// The AVX-512F GEMM kernels beside the 8x32 micro-kernel, gemm_edge_impl.h: the narrow micro-kernel over
// VecAvx512 (up to 2 panels = 32 rows, two zmm, by up to 14 columns, 28 accumulators: 16 loads per 28 FMAs,
// so the two FMA pipes set the pace, not the loads), its transposing store (16x16 blocks) and the 8-row
// A-panel packer over VecAvx2 (one 8x8 transpose per 8 k values; other shapes take the AVX2 packer).
#include "kernels/gemm/gemm_edge_impl.h"
#include "kernels/gemm/pack_a_panels.h"
#include "kernels/simd/vec_avx2.h"
#include "kernels/simd/vec_avx512.h"

namespace flexpipe {

void gemm_f32_narrow__avx512(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                             const float* b, const int64_t* b_off, float* t, bool accumulate) {
    gemm_narrow_vec<VecAvx512, 14, 2>(panels, cols, kc, a, a_next, b, b_off, t, accumulate);
}

void gemm_f32_narrow_store__avx512(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                   float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    gemm_narrow_store_vec<VecAvx512>(rows, cols, t, bias, add, c, c_rs, clamp, lo, hi);
}

void gemm_pack_a_f32__avx512(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                             float alpha, float* dst) {
    pack_a_full_panels<8>(mr, rows, kc, a, a_rs, a_cs, alpha, dst, gemm_pack_panel<VecAvx2, 8>, gemm_pack_a_f32__avx2);
}

}  // namespace flexpipe
