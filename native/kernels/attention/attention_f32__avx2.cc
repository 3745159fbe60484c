// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA float32 attention for one head: Kᵀ panel, 6x16 register tiles, vector softmax (attention.h).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "common/macros.h"
#include "kernels/attention/attention.h"
#include "kernels/eltwise/vmath__avx2.h"
#include "kernels/gemm/transpose_avx2.h"

namespace flexpipe {

namespace {

using namespace vmath_avx2;

constexpr int64_t mr = 6;   // query rows per block (12 accumulators + 2 B vectors + 1 broadcast)
constexpr int64_t nr = 16;  // columns per tile (two vectors)

// C[M x w] = alpha * A[M x k] B[k x w] for w <= 16 (w < 16: masked loads and stores of B and C).
template <int M>
void tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
          float alpha, int64_t w) {
    __m256 acc0[M], acc1[M];
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    if (w == nr) {
        for (int64_t p = 0; p < k; ++p) {
            const __m256 b0 = _mm256_loadu_ps(b + p * ldb);
            const __m256 b1 = _mm256_loadu_ps(b + p * ldb + 8);
#pragma GCC unroll 8
            for (int r = 0; r < M; ++r) {
                const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
                acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
                acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
            }
        }
        const __m256 al = _mm256_set1_ps(alpha);
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) {
            _mm256_storeu_ps(c + r * ldc, _mm256_mul_ps(acc0[r], al));
            _mm256_storeu_ps(c + r * ldc + 8, _mm256_mul_ps(acc1[r], al));
        }
        return;
    }
    const __m256i m0 = tail_mask(w < 8 ? w : 8), m1 = tail_mask(w > 8 ? w - 8 : 0);
    for (int64_t p = 0; p < k; ++p) {
        const __m256 b0 = _mm256_maskload_ps(b + p * ldb, m0);
        const __m256 b1 = _mm256_maskload_ps(b + p * ldb + 8, m1);
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
            acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
        }
    }
    const __m256 al = _mm256_set1_ps(alpha);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
        _mm256_maskstore_ps(c + r * ldc, m0, _mm256_mul_ps(acc0[r], al));
        _mm256_maskstore_ps(c + r * ldc + 8, m1, _mm256_mul_ps(acc1[r], al));
    }
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
        case 4:
            return tile<4>(k, a, lda, b, ldb, c, ldc, alpha, w);
        case 5:
            return tile<5>(k, a, lda, b, ldb, c, ldc, alpha, w);
        default:
            return tile<6>(k, a, lda, b, ldb, c, ldc, alpha, w);
    }
}

// kt[d][j] = k[j][d] for j < n, zero for n <= j < round_up(n, 16); 8x8 blocks through registers.
void transpose_keys(const float* k, int64_t ldk, int64_t n, int64_t dh, float* kt, int64_t ldt) {
    const int64_t np = (n + nr - 1) / nr * nr;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        int64_t d = 0;
        for (; d + 8 <= dh; d += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(k + (j + i) * ldk + d);
            __m256 o[8];
            transpose_8x8_avx2(r, o);  // rows (j..j+7) x cols (d..d+7) -> transposed
            for (int i = 0; i < 8; ++i) _mm256_storeu_ps(kt + (d + i) * ldt + j, o[i]);
        }
        for (; d < dh; ++d)
            for (int64_t i = 0; i < 8; ++i) kt[d * ldt + j + i] = k[(j + i) * ldk + d];
    }
    for (; j < np; ++j)
        for (int64_t d = 0; d < dh; ++d) kt[d * ldt + j] = j < n ? k[j * ldk + d] : 0.0f;
}

// s[0..n) = softmax(s + mask) in place; s[n..n_zero) = 0.
void softmax_row(float* s, int64_t n, const float* mask, int64_t n_zero) {
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 vmax = ninf;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 x = _mm256_loadu_ps(s + j);
        if (mask) {
            x = _mm256_add_ps(x, _mm256_loadu_ps(mask + j));
            _mm256_storeu_ps(s + j, x);
        }
        vmax = _mm256_max_ps(x, vmax);  // a NaN score is skipped, as the ref's `x > m ? x : m`
    }
    if (j < n) {
        const __m256i tm = tail_mask(n - j);
        __m256 x = _mm256_maskload_ps(s + j, tm);
        if (mask) {
            x = _mm256_add_ps(x, _mm256_maskload_ps(mask + j, tm));
            _mm256_maskstore_ps(s + j, tm, x);
        }
        vmax = _mm256_max_ps(_mm256_blendv_ps(ninf, x, _mm256_castsi256_ps(tm)), vmax);
    }
    const __m256 m = _mm256_set1_ps(hmax_ps(vmax));
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (j = 0; j + 16 <= n; j += 16) {
        const __m256 e0 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j), m));
        const __m256 e1 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j + 8), m));
        _mm256_storeu_ps(s + j, e0);
        _mm256_storeu_ps(s + j + 8, e1);
        acc0 = _mm256_add_ps(acc0, e0);
        acc1 = _mm256_add_ps(acc1, e1);
    }
    for (; j < n; j += 8) {
        const __m256i tm = tail_mask(n - j);
        const __m256 e =
            _mm256_and_ps(exp_ps(_mm256_sub_ps(_mm256_maskload_ps(s + j, tm), m)), _mm256_castsi256_ps(tm));
        _mm256_maskstore_ps(s + j, tm, e);
        acc0 = _mm256_add_ps(acc0, e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / hsum_ps(_mm256_add_ps(acc0, acc1)));
    for (j = 0; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), inv));
    for (; j < n; ++j) s[j] *= _mm256_cvtss_f32(inv);
    for (; j < n_zero; ++j) s[j] = 0.0f;
}

}  // namespace

void attention_f32__avx2(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
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
        // S[m x nk] = Q[i0.., :] Kᵀ[:, 0..nk) * scale, padded to whole tiles (zero keys)
        for (int64_t j = 0; j < nk; j += nr)
            tile_rows(m, a.dh, a.q + i0 * a.ldq, a.ldq, kt + j, ldt, s + j, ldt, a.scale, nr);
        for (int64_t r = 0; r < m; ++r) {
            const int64_t i = i0 + r;
            const int64_t len = a.causal && i + 1 < nk ? i + 1 : nk;
            softmax_row(s + r * ldt, len, a.mask ? a.mask + i * a.mask_ld : nullptr, nk);
        }
        // O[m x dh] = P[m x nk] V[0..nk, :]
        for (int64_t c = 0; c < a.dh; c += nr) {
            tile_rows(m, nk, s, ldt, a.v + c, a.ldv, a.o + i0 * a.ldo + c, a.ldo, 1.0f,
                      a.dh - c < nr ? a.dh - c : nr);
        }
    }
}

}  // namespace flexpipe
