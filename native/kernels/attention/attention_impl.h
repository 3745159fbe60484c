// SPDX-License-Identifier: Apache-2.0
// The fused attention driver of the SIMD variants (attention.h) written once over a vector type with its
// vector math (VecMath<Vec>, vmath_impl.h): attention_f32__<isa> is attention_vec<VecMath<Vec<isa>>, MR>.
//
// Per call: Kᵀ panel (L x L blocks through Vec::transpose, L = Vec::lanes), then for blocks of MR query
// rows S = Q Kᵀ * scale in MR x 16 register tiles (16 / L vectors per row), the exact row softmax, and
// O = P V in MR x 16 tiles. A tile narrower than 16 columns (the right edge of dh) uses masked loads and
// stores where the ISA has them (Vec::masked_memory) and a scalar FMA loop otherwise. MR is the ISA's:
// 6 rows on AVX2 (12 accumulators + 2 B vectors + 1 broadcast of 16 ymm), 4 on NEON (16 accumulators +
// 4 B vectors).
#pragma once

#include <cmath>
#include <cstdint>

#include "common/macros.h"
#include "kernels/attention/attention.h"

namespace flexpipe {
namespace {

constexpr int64_t attention_nr = 16;  // columns per tile

// C[M x w] = alpha * A[M x k] B[k x w] for w <= 16.
template <class Vec, int M>
void attention_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                    float alpha, int64_t w) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes, NV = attention_nr / L;
    V acc[M][NV];
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = Vec::zero();
    const V al = Vec::set1(alpha);
    if (w == attention_nr) {
        for (int64_t p = 0; p < k; ++p) {
            V bv[NV];
            for (int v = 0; v < NV; ++v) bv[v] = Vec::load(b + p * ldb + L * v);
#pragma GCC unroll 8
            for (int r = 0; r < M; ++r) {
                const V av = Vec::load1(a + r * lda + p);
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v) acc[r][v] = Vec::fma(av, bv[v], acc[r][v]);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) Vec::store(c + r * ldc + L * v, Vec::mul(acc[r][v], al));
    } else if constexpr (Vec::masked_memory) {
        int64_t n[NV];  // the columns of vector v inside [0, w)
        for (int v = 0; v < NV; ++v) n[v] = w - L * v < 0 ? 0 : (w - L * v > L ? L : w - L * v);
        for (int64_t p = 0; p < k; ++p) {
            V bv[NV];
            for (int v = 0; v < NV; ++v) bv[v] = Vec::load_first(b + p * ldb + L * v, n[v]);
#pragma GCC unroll 8
            for (int r = 0; r < M; ++r) {
                const V av = Vec::load1(a + r * lda + p);
                for (int v = 0; v < NV; ++v) acc[r][v] = Vec::fma(av, bv[v], acc[r][v]);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < M; ++r)
            for (int v = 0; v < NV; ++v) Vec::store_first(c + r * ldc + L * v, n[v], Vec::mul(acc[r][v], al));
    } else {
        for (int r = 0; r < M; ++r) {
            for (int64_t x = 0; x < w; ++x) {
                float sum = 0.0f;
                for (int64_t p = 0; p < k; ++p) sum = std::fma(a[r * lda + p], b[p * ldb + x], sum);
                c[r * ldc + x] = sum * alpha;
            }
        }
    }
}

template <class Vec, int MR>
void attention_tile_rows(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                         int64_t ldc, float alpha, int64_t w) {
    if constexpr (MR > 1) {
        if (m < MR) return attention_tile_rows<Vec, MR - 1>(m, k, a, lda, b, ldb, c, ldc, alpha, w);
    }
    attention_tile<Vec, MR>(k, a, lda, b, ldb, c, ldc, alpha, w);
}

// kt[d][j] = k[j][d] for j < n, zero for n <= j < round_up(n, 16); L x L blocks through registers.
template <class Vec>
void attention_transpose_keys(const float* k, int64_t ldk, int64_t n, int64_t dh, float* kt, int64_t ldt) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const int64_t np = (n + attention_nr - 1) / attention_nr * attention_nr;
    int64_t j = 0;
    for (; j + L <= n; j += L) {
        int64_t d = 0;
        for (; d + L <= dh; d += L) {
            V r[L];
            for (int i = 0; i < L; ++i) r[i] = Vec::load(k + (j + i) * ldk + d);
            Vec::transpose(r);  // rows (j..j+L-1) x cols (d..d+L-1) -> transposed
            for (int i = 0; i < L; ++i) Vec::store(kt + (d + i) * ldt + j, r[i]);
        }
        for (; d < dh; ++d)
            for (int64_t i = 0; i < L; ++i) kt[d * ldt + j + i] = k[(j + i) * ldk + d];
    }
    for (; j < np; ++j)
        for (int64_t d = 0; d < dh; ++d) kt[d * ldt + j] = j < n ? k[j * ldk + d] : 0.0f;
}

// s[0..n) = softmax(s + mask) in place; s[n..n_zero) = 0. The max skips NaN scores, as the ref's
// `x > m ? x : m` (Vec::max); the partial last vector reads and writes only its lanes.
template <class Vec>
void attention_softmax_row(float* s, int64_t n, const float* mask, int64_t n_zero) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const V ninf = Vec::set1(-INFINITY);
    V vmax = ninf;
    int64_t j = 0;
    for (; j + L <= n; j += L) {
        V x = Vec::load(s + j);
        if (mask) {
            x = Vec::add(x, Vec::load(mask + j));
            Vec::store(s + j, x);
        }
        vmax = Vec::max(x, vmax);
    }
    if (j < n) {
        V x = Vec::load_first(s + j, n - j);
        if (mask) {
            x = Vec::add(x, Vec::load_first(mask + j, n - j));
            Vec::store_first(s + j, n - j, x);
        }
        vmax = Vec::max(Vec::select(Vec::first_lanes(n - j), x, ninf), vmax);
    }
    const V m = Vec::set1(Vec::hmax(vmax));
    V acc0 = Vec::zero(), acc1 = Vec::zero();
    for (j = 0; j + 2 * L <= n; j += 2 * L) {
        const V e0 = Vec::exp(Vec::sub(Vec::load(s + j), m));
        const V e1 = Vec::exp(Vec::sub(Vec::load(s + j + L), m));
        Vec::store(s + j, e0);
        Vec::store(s + j + L, e1);
        acc0 = Vec::add(acc0, e0);
        acc1 = Vec::add(acc1, e1);
    }
    for (; j < n; j += L) {
        const int64_t t = n - j < L ? n - j : L;
        const V e = Vec::select(Vec::first_lanes(t), Vec::exp(Vec::sub(Vec::load_first(s + j, t), m)), Vec::zero());
        Vec::store_first(s + j, t, e);
        acc0 = Vec::add(acc0, e);
    }
    const float inv = 1.0f / Vec::hsum(Vec::add(acc0, acc1));
    const V vinv = Vec::set1(inv);
    for (j = 0; j + L <= n; j += L) Vec::store(s + j, Vec::mul(Vec::load(s + j), vinv));
    for (; j < n; ++j) s[j] *= inv;
    for (; j < n_zero; ++j) s[j] = 0.0f;
}

template <class Vec, int MR>
void attention_vec(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
    FLEXPIPE_DCHECK(row_begin >= 0 && row_end <= a.seq_q && a.dh >= 1);
    constexpr int64_t nr = attention_nr;
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
    attention_transpose_keys<Vec>(a.k, a.ldk, n_keys, a.dh, kt, ldt);
    for (int64_t i0 = row_begin; i0 < row_end; i0 += MR) {
        const int64_t m = row_end - i0 < MR ? row_end - i0 : MR;
        const int64_t nk = a.causal && i0 + m < a.seq_kv ? i0 + m : a.seq_kv;
        // S[m x nk] = Q[i0.., :] Kᵀ[:, 0..nk) * scale, padded to whole tiles (zero keys)
        for (int64_t j = 0; j < nk; j += nr)
            attention_tile_rows<Vec, MR>(m, a.dh, a.q + i0 * a.ldq, a.ldq, kt + j, ldt, s + j, ldt, a.scale, nr);
        for (int64_t r = 0; r < m; ++r) {
            const int64_t i = i0 + r;
            const int64_t len = a.causal && i + 1 < nk ? i + 1 : nk;
            attention_softmax_row<Vec>(s + r * ldt, len, a.mask ? a.mask + i * a.mask_ld : nullptr, nk);
        }
        // O[m x dh] = P[m x nk] V[0..nk, :]
        for (int64_t c = 0; c < a.dh; c += nr) {
            attention_tile_rows<Vec, MR>(m, nk, s, ldt, a.v + c, a.ldv, a.o + i0 * a.ldo + c, a.ldo, 1.0f,
                                         a.dh - c < nr ? a.dh - c : nr);
        }
    }
}

}  // namespace
}  // namespace flexpipe
