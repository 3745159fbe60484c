// SPDX-License-Identifier: Apache-2.0
// Reference packed-panel micro-kernel, 4x8 tile (contract in gemm.h): packed or in-place operands.
#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

void gemm_f32_4x8__ref(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                       int64_t ldc, const GemmTileParams& p) {
    constexpr int64_t tile_m = 4, tile_n = 8;
    FLEXPIPE_DCHECK(mr >= 1 && mr <= tile_m && nr >= 1 && nr <= tile_n && kc >= 0);
    const int64_t a_rs = p.a_ks ? p.a_rs : 1, a_ks = p.a_ks ? p.a_ks : tile_m;
    const int64_t b_ks = p.b_ks ? p.b_ks : tile_n;
    float acc[tile_m][tile_n] = {};
    for (int64_t k = 0; k < kc; ++k)  // acc += A[:, k] * B[k, :] (outer product)
        for (int64_t i = 0; i < mr; ++i)
            for (int64_t j = 0; j < nr; ++j) acc[i][j] += a[i * a_rs + k * a_ks] * b[k * b_ks + j];
    for (int64_t i = 0; i < mr; ++i) {
        for (int64_t j = 0; j < nr; ++j) {
            const float init = p.load_c ? c[i * ldc + j] : (p.add ? p.add[i * ldc + j] : 0.0f);
            float v = init + acc[i][j] + (p.bias ? p.bias[j] : 0.0f) + (p.row_bias ? p.row_bias[i] : 0.0f);
            if (p.clamp) v = v < p.min ? p.min : (v > p.max ? p.max : v);  // NaN passes through
            c[i * ldc + j] = v;
        }
    }
}

}  // namespace flexpipe
