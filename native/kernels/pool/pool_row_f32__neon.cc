// SPDX-License-Identifier: Apache-2.0
// NEON row micro-kernels of the fast float32 pooling path: pool_row_impl.h over VecNeon.
#include "kernels/pool/pool_row_impl.h"
#include "kernels/simd/vec_neon.h"

namespace flexpipe {

void pool_vmax_f32__neon(float* y, const float* a, const float* b, int64_t n) { pool_vmax_vec<VecNeon>(y, a, b, n); }

void pool_vsum_f32__neon(float* y, const float* a, const float* b, int64_t n) { pool_vsum_vec<VecNeon>(y, a, b, n); }

void pool_hmax_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation) {
    pool_horizontal<VecNeon, PoolMaxOp<VecNeon>>(b, y, n, k, stride, dilation, 1.0f);
}

void pool_hsum_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale) {
    pool_horizontal<VecNeon, PoolSumOp<VecNeon>>(b, y, n, k, stride, dilation, scale);
}

void pool_max3x3s2_f32__neon(const float* r0, const float* r1, const float* r2, float* y, int64_t n) {
    pool_max3x3s2_vec<VecNeon>(r0, r1, r2, y, n);
}

double pool_sum_f32__neon(const float* x, int64_t n) { return pool_sum_vec<VecNeon>(x, n); }

float pool_max_f32__neon(const float* x, int64_t n) { return pool_max_vec<VecNeon>(x, n); }

}  // namespace flexpipe
