// SPDX-License-Identifier: Apache-2.0
// NEON float32 attention for one head: Kᵀ panel, 4x16 register tiles, vector softmax (attention.h).
#include <arm_neon.h>

#include <cmath>
#include <cstdint>

#include "common/macros.h"
#include "kernels/attention/attention.h"
#include "kernels/eltwise/vmath__neon.h"

namespace flexpipe {

namespace {

using namespace vmath_neon;

constexpr int64_t mr = 4;   // query rows per block (16 accumulators + 4 B vectors)
constexpr int64_t nr = 16;  // columns per tile (four vectors)

// C[M x w] = alpha * A[M x k] B[k x w], w <= 16; a partial tile (w < 16) runs the scalar loop.
template <int M>
void tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
          float alpha, int64_t w) {
    if (w < nr) {
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) {
            for (int64_t x = 0; x < w; ++x) {
                float acc = 0.0f;
                for (int64_t p = 0; p < k; ++p) acc = std::fma(a[r * lda + p], b[p * ldb + x], acc);
                c[r * ldc + x] = acc * alpha;
            }
        }
        return;
    }
    float32x4_t acc[M][4];
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) acc[r][v] = vdupq_n_f32(0.0f);
    for (int64_t p = 0; p < k; ++p) {
        const float* bp = b + p * ldb;
        const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4), b2 = vld1q_f32(bp + 8),
                          b3 = vld1q_f32(bp + 12);
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) {
            const float av = a[r * lda + p];
            acc[r][0] = vfmaq_n_f32(acc[r][0], b0, av);
            acc[r][1] = vfmaq_n_f32(acc[r][1], b1, av);
            acc[r][2] = vfmaq_n_f32(acc[r][2], b2, av);
            acc[r][3] = vfmaq_n_f32(acc[r][3], b3, av);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) vst1q_f32(c + r * ldc + 4 * v, vmulq_n_f32(acc[r][v], alpha));
}

void tile_rows(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
               int64_t ldc, float alpha, int64_t w) {
    switch (m) {
        case 1:
            return tile<1>(k, a, lda, b, ldb, c, ldc, alpha, w);
        case 2:
            return tile<2>(k, a, lda, b, ldb, c, ldc, alpha, w);
        case 3:
            return tile<3>(k, a, lda, b, ldb, c, ldc, alpha, w);
        default:
            return tile<4>(k, a, lda, b, ldb, c, ldc, alpha, w);
    }
}

// kt[d][j] = k[j][d] for j < n, zero for n <= j < round_up(n, 16); 4x4 blocks through registers.
void transpose_keys(const float* k, int64_t ldk, int64_t n, int64_t dh, float* kt, int64_t ldt) {
    const int64_t np = (n + nr - 1) / nr * nr;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        int64_t d = 0;
        for (; d + 4 <= dh; d += 4) {
            const float32x4_t r0 = vld1q_f32(k + j * ldk + d), r1 = vld1q_f32(k + (j + 1) * ldk + d);
            const float32x4_t r2 = vld1q_f32(k + (j + 2) * ldk + d), r3 = vld1q_f32(k + (j + 3) * ldk + d);
            // 4x4 transpose: trn1/trn2 on 32-bit, then on 64-bit lanes
            const float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
            const float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
            const float64x2_t d0 = vreinterpretq_f64_f32(t0), d1 = vreinterpretq_f64_f32(t1);
            const float64x2_t d2 = vreinterpretq_f64_f32(t2), d3 = vreinterpretq_f64_f32(t3);
            vst1q_f32(kt + d * ldt + j, vreinterpretq_f32_f64(vtrn1q_f64(d0, d2)));
            vst1q_f32(kt + (d + 1) * ldt + j, vreinterpretq_f32_f64(vtrn1q_f64(d1, d3)));
            vst1q_f32(kt + (d + 2) * ldt + j, vreinterpretq_f32_f64(vtrn2q_f64(d0, d2)));
            vst1q_f32(kt + (d + 3) * ldt + j, vreinterpretq_f32_f64(vtrn2q_f64(d1, d3)));
        }
        for (; d < dh; ++d)
            for (int64_t i = 0; i < 4; ++i) kt[d * ldt + j + i] = k[(j + i) * ldk + d];
    }
    for (; j < np; ++j)
        for (int64_t d = 0; d < dh; ++d) kt[d * ldt + j] = j < n ? k[j * ldk + d] : 0.0f;
}

// s[0..n) = softmax(s + mask) in place; s[n..n_zero) = 0. Tails go through a 4-float buffer.
void softmax_row(float* s, int64_t n, const float* mask, int64_t n_zero) {
    float32x4_t vmax = vdupq_n_f32(-INFINITY);
    float mt = -INFINITY;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        float32x4_t x = vld1q_f32(s + j);
        if (mask) {
            x = vaddq_f32(x, vld1q_f32(mask + j));
            vst1q_f32(s + j, x);
        }
        // skip NaN scores, as the ref's `x > m ? x : m` does (vmaxq would propagate them)
        vmax = vbslq_f32(vcgtq_f32(x, vmax), x, vmax);
    }
    for (; j < n; ++j) {
        if (mask) s[j] += mask[j];
        mt = s[j] > mt ? s[j] : mt;
    }
    const float hm = vmaxvq_f32(vmax);
    const float32x4_t m = vdupq_n_f32(hm > mt ? hm : mt);
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    for (j = 0; j + 8 <= n; j += 8) {
        const float32x4_t e0 = exp_ps(vsubq_f32(vld1q_f32(s + j), m));
        const float32x4_t e1 = exp_ps(vsubq_f32(vld1q_f32(s + j + 4), m));
        vst1q_f32(s + j, e0);
        vst1q_f32(s + j + 4, e1);
        acc0 = vaddq_f32(acc0, e0);
        acc1 = vaddq_f32(acc1, e1);
    }
    for (; j < n; j += 4) {
        float buf[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        const int64_t t = n - j < 4 ? n - j : 4;
        for (int64_t i = 0; i < t; ++i) buf[i] = s[j + i];
        const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(buf), m));  // exp(-inf) = 0 in unused lanes
        vst1q_f32(buf, e);
        for (int64_t i = 0; i < t; ++i) s[j + i] = buf[i];
        acc0 = vaddq_f32(acc0, e);
    }
    const float inv = 1.0f / vaddvq_f32(vaddq_f32(acc0, acc1));
    for (j = 0; j + 4 <= n; j += 4) vst1q_f32(s + j, vmulq_n_f32(vld1q_f32(s + j), inv));
    for (; j < n; ++j) s[j] *= inv;
    for (; j < n_zero; ++j) s[j] = 0.0f;
}

}  // namespace

void attention_f32__neon(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
    FLEXPIPE_DCHECK(row_begin >= 0 && row_end <= a.seq_q && a.dh >= 1);
    if (row_begin >= row_end) return;
    if (a.seq_kv == 0) {
        for (int64_t i = row_begin; i < row_end; ++i)
            for (int64_t d = 0; d < a.dh; ++d) a.o[i * a.ldo + d] = 0.0f;
        return;
    }
    const int64_t ldt = (a.seq_kv + nr - 1) / nr * nr;
    float* kt = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws) + 63) & ~uintptr_t{63});
    float* s = kt + a.dh * ldt;
    const int64_t n_keys = a.causal && row_end < a.seq_kv ? row_end : a.seq_kv;
    transpose_keys(a.k, a.ldk, n_keys, a.dh, kt, ldt);
    for (int64_t i0 = row_begin; i0 < row_end; i0 += mr) {
        const int64_t m = row_end - i0 < mr ? row_end - i0 : mr;
        const int64_t nk = a.causal && i0 + m < a.seq_kv ? i0 + m : a.seq_kv;
        for (int64_t j = 0; j < nk; j += nr)
            tile_rows(m, a.dh, a.q + i0 * a.ldq, a.ldq, kt + j, ldt, s + j, ldt, a.scale, nr);
        for (int64_t r = 0; r < m; ++r) {
            const int64_t i = i0 + r;
            const int64_t len = a.causal && i + 1 < nk ? i + 1 : nk;
            softmax_row(s + r * ldt, len, a.mask ? a.mask + i * a.mask_ld : nullptr, nk);
        }
        for (int64_t c = 0; c < a.dh; c += nr) {
            tile_rows(m, nk, s, ldt, a.v + c, a.ldv, a.o + i0 * a.ldo + c, a.ldo, 1.0f,
                      a.dh - c < nr ? a.dh - c : nr);
        }
    }
}

}  // namespace flexpipe
