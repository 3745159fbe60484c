// SPDX-License-Identifier: Apache-2.0
// NEON packed-panel micro-kernel, 8x12 tile: 24 q-register accumulators (8 rows x 3 vectors of 4),
// per k step two loads of A (8 rows), three of B and 24 fmla by lane (contract in gemm.h). Operands
// read in place (strided A rows, strided B rows) take a loop with run-time strides and fmla by scalar.
#include <arm_neon.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

namespace {

constexpr int tile_m = 8;
constexpr int tile_n = 12;

// acc[r][v] += b_v * a[r] for rows r..R-1 (lane r % 4 of a0 = rows 0..3 or a1 = rows 4..7); the
// recursion makes every lane index a constant, as fmla by element requires.
template <int R, int r>
inline void fma_rows(float32x4_t (&acc)[R][3], float32x4_t a0, float32x4_t a1, float32x4_t b0, float32x4_t b1,
                     float32x4_t b2) {
    if constexpr (r < R) {
        const float32x4_t av = r < 4 ? a0 : a1;
        acc[r][0] = vfmaq_laneq_f32(acc[r][0], b0, av, r % 4);
        acc[r][1] = vfmaq_laneq_f32(acc[r][1], b1, av, r % 4);
        acc[r][2] = vfmaq_laneq_f32(acc[r][2], b2, av, r % 4);
        fma_rows<R, r + 1>(acc, a0, a1, b0, b1, b2);
    }
}

// v = (load_c ? c : add ? add : 0) + acc + bias, then clamp (NaN passes: vmaxnm/vminnm would drop it, vmax/vmin keep it).
template <int R>
__attribute__((always_inline)) inline void store_rows(float32x4_t (&acc)[R][3], int64_t nr, float* c, int64_t ldc, const GemmTileParams& p) {
    const float32x4_t lo = vdupq_n_f32(p.min), hi = vdupq_n_f32(p.max);
    float32x4_t bias[3] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    float row[tile_n];
    const float* row_bias = p.row_bias;
    if (p.bias) {
        for (int j = 0; j < tile_n; ++j) row[j] = j < nr ? p.bias[j] : 0.0f;
        for (int v = 0; v < 3; ++v) bias[v] = vld1q_f32(row + 4 * v);
    }
    const float* init = p.load_c ? c : p.add;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        float* cr = c + r * ldc;
        const float* ir = init ? init + r * ldc : nullptr;
        const bool full = nr == tile_n;
        if (!full && ir) {
            for (int j = 0; j < tile_n; ++j) row[j] = j < nr ? ir[j] : 0.0f;
        }
        float* dst = full ? cr : row;
        const float* src = full ? ir : row;
#pragma GCC unroll 3
        for (int v = 0; v < 3; ++v) {
            float32x4_t x = acc[r][v];
            if (ir) x = vaddq_f32(x, vld1q_f32(src + 4 * v));
            x = vaddq_f32(x, bias[v]);
            if (row_bias) x = vaddq_f32(x, vdupq_n_f32(row_bias[r]));
            if (p.clamp) x = vminq_f32(vmaxq_f32(x, lo), hi);
            vst1q_f32(dst + 4 * v, x);
        }
        if (!full) {
            for (int j = 0; j < nr; ++j) cr[j] = row[j];
        }
    }
}

template <int R>
void tile_rows(int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               const GemmTileParams& p) {
    float32x4_t acc[R][3];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = vdupq_n_f32(0.0f);
    if (p.a_ks == 0 && p.b_ks == 0) {
        for (int64_t k = 0; k < kc; ++k) {
            const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            fma_rows<R, 0>(acc, a0, a1, b0, b1, b2);
            a += tile_m;
            b += tile_n;
        }
    } else {
        const int64_t a_rs = p.a_ks ? p.a_rs : 1, a_ks = p.a_ks ? p.a_ks : tile_m;
        const int64_t b_ks = p.b_ks ? p.b_ks : tile_n;
        for (int64_t k = 0; k < kc; ++k) {
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
                const float ar = a[r * a_rs + k * a_ks];
                acc[r][0] = vfmaq_n_f32(acc[r][0], b0, ar);
                acc[r][1] = vfmaq_n_f32(acc[r][1], b1, ar);
                acc[r][2] = vfmaq_n_f32(acc[r][2], b2, ar);
            }
            b += b_ks;
        }
    }
    store_rows<R>(acc, nr, c, ldc, p);
}

}  // namespace

void gemm_f32_8x12__neon(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                         int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(mr >= 1 && mr <= tile_m && nr >= 1 && nr <= tile_n && kc >= 0);
    switch (mr) {
        case 8: tile_rows<8>(nr, kc, a, b, c, ldc, p); break;
        case 7: tile_rows<7>(nr, kc, a, b, c, ldc, p); break;
        case 6: tile_rows<6>(nr, kc, a, b, c, ldc, p); break;
        case 5: tile_rows<5>(nr, kc, a, b, c, ldc, p); break;
        case 4: tile_rows<4>(nr, kc, a, b, c, ldc, p); break;
        case 3: tile_rows<3>(nr, kc, a, b, c, ldc, p); break;
        case 2: tile_rows<2>(nr, kc, a, b, c, ldc, p); break;
        default: tile_rows<1>(nr, kc, a, b, c, ldc, p); break;
    }
}

}  // namespace flexpipe
