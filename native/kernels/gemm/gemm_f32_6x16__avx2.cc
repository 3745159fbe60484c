// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA packed-panel micro-kernel, 6x16 tile: 12 ymm accumulators (6 rows x 2 vectors of 8),
// per k step two loads of B and six broadcasts of A feeding 12 FMAs (contract in gemm.h). Operands
// read in place (strided A rows, strided B rows) take the same loop with run-time strides.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

namespace {

constexpr int tile_m = 6;
constexpr int tile_n = 16;

// mask_src + 16 - n: the first n lanes are all-ones (maskload/maskstore of a partial row).
alignas(64) const int32_t mask_src[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};

// c rows 0..R-1 = epilogue(acc); v = (load_c ? c : add ? add : 0) + acc + bias, then max(lo, v), min(hi, v) with
// the operands ordered so that a NaN in v propagates (maxps/minps return the second operand on NaN).
template <int R>
__attribute__((always_inline)) inline void store_rows(const __m256 (&acc0)[R], const __m256 (&acc1)[R], int64_t nr, float* c, int64_t ldc,
                const GemmTileParams& p) {
    const bool full = nr == tile_n;
    const __m256i m0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask_src + 16 - nr));
    const __m256i m1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask_src + 16 - (nr > 8 ? nr - 8 : 0)));
    __m256 bias0 = _mm256_setzero_ps(), bias1 = _mm256_setzero_ps();
    if (p.bias) {
        bias0 = full ? _mm256_loadu_ps(p.bias) : _mm256_maskload_ps(p.bias, m0);
        bias1 = full ? _mm256_loadu_ps(p.bias + 8) : _mm256_maskload_ps(p.bias + 8, m1);
    }
    const __m256 lo = _mm256_set1_ps(p.min), hi = _mm256_set1_ps(p.max);
    const float* init = p.load_c ? c : p.add;
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        float* cr = c + r * ldc;
        __m256 v0 = acc0[r], v1 = acc1[r];
        if (init) {
            const float* ir = init + r * ldc;
            v0 = _mm256_add_ps(v0, full ? _mm256_loadu_ps(ir) : _mm256_maskload_ps(ir, m0));
            v1 = _mm256_add_ps(v1, full ? _mm256_loadu_ps(ir + 8) : _mm256_maskload_ps(ir + 8, m1));
        }
        if (p.bias) {
            v0 = _mm256_add_ps(v0, bias0);
            v1 = _mm256_add_ps(v1, bias1);
        }
        if (p.row_bias) {
            const __m256 rb = _mm256_broadcast_ss(p.row_bias + r);
            v0 = _mm256_add_ps(v0, rb);
            v1 = _mm256_add_ps(v1, rb);
        }
        if (p.clamp) {
            v0 = _mm256_min_ps(hi, _mm256_max_ps(lo, v0));
            v1 = _mm256_min_ps(hi, _mm256_max_ps(lo, v1));
        }
        if (full) {
            _mm256_storeu_ps(cr, v0);
            _mm256_storeu_ps(cr + 8, v1);
        } else {
            _mm256_maskstore_ps(cr, m0, v0);
            _mm256_maskstore_ps(cr + 8, m1, v1);
        }
    }
}

// R valid rows (1..6): only R broadcasts and 2R FMAs per k step, so short edge tiles and M = 1 cost
// what they compute. Packed: a keeps the 6-row panel stride and b the 16-column one; else the
// strides of the params (A(i, p) = a[i * a_rs + p * a_ks], B(p, j) = b[p * b_ks + j]). V is the
// number of 8-column vectors computed: 1 for a tile of at most 8 columns (the right edge, e.g. the
// 49th pixel of a 7x7 plane), which then costs half a full tile.
template <int R, bool Packed, int V>
void tile_rows(int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               const GemmTileParams& p) {
    __m256 acc0[R], acc1[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    const int64_t a_rs = Packed ? 1 : (p.a_ks ? p.a_rs : 1), a_ks = Packed ? tile_m : (p.a_ks ? p.a_ks : tile_m);
    const int64_t b_ks = Packed ? tile_n : (p.b_ks ? p.b_ks : tile_n);
    const float* rows[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) rows[r] = a + r * a_rs;
    if constexpr (Packed) {
        for (int64_t k = 0; k < kc; ++k) {
            const __m256 b0 = _mm256_loadu_ps(b);
            const __m256 b1 = V == 2 ? _mm256_loadu_ps(b + 8) : b0;
#pragma GCC unroll 6
            for (int r = 0; r < R; ++r) {
                const __m256 ar = _mm256_broadcast_ss(a + r);
                acc0[r] = _mm256_fmadd_ps(ar, b0, acc0[r]);
                if (V == 2) acc1[r] = _mm256_fmadd_ps(ar, b1, acc1[r]);
            }
            a += tile_m;
            b += tile_n;
        }
    } else {
        for (int64_t k = 0, ak = 0; k < kc; ++k, ak += a_ks) {
            const __m256 b0 = _mm256_loadu_ps(b);
            const __m256 b1 = V == 2 ? _mm256_loadu_ps(b + 8) : b0;
#pragma GCC unroll 6
            for (int r = 0; r < R; ++r) {
                const __m256 ar = _mm256_broadcast_ss(rows[r] + ak);
                acc0[r] = _mm256_fmadd_ps(ar, b0, acc0[r]);
                if (V == 2) acc1[r] = _mm256_fmadd_ps(ar, b1, acc1[r]);
            }
            b += b_ks;
        }
    }
    store_rows<R>(acc0, acc1, nr, c, ldc, p);
}

template <bool Packed, int V>
void tile(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
          const GemmTileParams& p) {
    switch (mr) {
        case 6: tile_rows<6, Packed, V>(nr, kc, a, b, c, ldc, p); break;
        case 5: tile_rows<5, Packed, V>(nr, kc, a, b, c, ldc, p); break;
        case 4: tile_rows<4, Packed, V>(nr, kc, a, b, c, ldc, p); break;
        case 3: tile_rows<3, Packed, V>(nr, kc, a, b, c, ldc, p); break;
        case 2: tile_rows<2, Packed, V>(nr, kc, a, b, c, ldc, p); break;
        default: tile_rows<1, Packed, V>(nr, kc, a, b, c, ldc, p); break;
    }
}

}  // namespace

void gemm_f32_6x16__avx2(int64_t mr, int64_t nr, int64_t kc, const float* a, const float* b, float* c,
                         int64_t ldc, const GemmTileParams& p) {
    FLEXPIPE_DCHECK(mr >= 1 && mr <= tile_m && nr >= 1 && nr <= tile_n && kc >= 0);
    const bool packed = p.a_ks == 0 && p.b_ks == 0;
    if (nr > 8) {
        packed ? tile<true, 2>(mr, nr, kc, a, b, c, ldc, p) : tile<false, 2>(mr, nr, kc, a, b, c, ldc, p);
    } else {
        packed ? tile<true, 1>(mr, nr, kc, a, b, c, ldc, p) : tile<false, 1>(mr, nr, kc, a, b, c, ldc, p);
    }
}

}  // namespace flexpipe
