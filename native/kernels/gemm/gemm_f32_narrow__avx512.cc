// SPDX-License-Identifier: Apache-2.0
// AVX-512F narrow GEMM micro-kernel (contract in narrow.h): up to 2 panels (32 rows, two zmm) by up
// to 14 columns, 28 zmm accumulators. Per k step: one load of A per panel and one broadcast of B per
// column, each broadcast feeding both panels: 16 loads per 28 FMAs at 14 columns, so the two FMA
// pipes set the pace, not the loads.
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"

namespace flexpipe {

namespace {

constexpr int max_cols = 14;

template <int V, int P, size_t... Js>
__attribute__((always_inline)) inline void step(std::index_sequence<Js...>, __m512 (&acc)[P][V], const __m512 (&av)[V],
                                                const float* b) {
    auto one = [&](auto j) {
        constexpr int J = decltype(j)::value;
        const __m512 bj = _mm512_set1_ps(b[J]);
        acc[J][0] = _mm512_fmadd_ps(av[0], bj, acc[J][0]);
        if constexpr (V == 2) acc[J][1] = _mm512_fmadd_ps(av[1], bj, acc[J][1]);
    };
    (one(std::integral_constant<int, static_cast<int>(Js)>{}), ...);
}

template <int V, int P>
void tile(int64_t kc, const float* a, int64_t a_next, const float* b, const int64_t* b_off, float* t, bool accumulate) {
    __m512 acc[P][V];
#pragma GCC unroll 14
    for (int j = 0; j < P; ++j)
        for (int v = 0; v < V; ++v)
            acc[j][v] = accumulate ? _mm512_loadu_ps(t + j * narrow_ldt + v * 16) : _mm512_setzero_ps();
    const float* a1 = a + (V == 2 ? a_next : 0);
    for (int64_t p = 0; p < kc; ++p, a += 16, a1 += 16) {
        __m512 av[V];
        av[0] = _mm512_loadu_ps(a);
        if constexpr (V == 2) av[1] = _mm512_loadu_ps(a1);
        step<V, P>(std::make_index_sequence<P>{}, acc, av, b + b_off[p]);
    }
#pragma GCC unroll 14
    for (int j = 0; j < P; ++j)
        for (int v = 0; v < V; ++v) _mm512_storeu_ps(t + j * narrow_ldt + v * 16, acc[j][v]);
}

}  // namespace

void gemm_f32_narrow__avx512(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                             const float* b, const int64_t* b_off, float* t, bool accumulate) {
    FLEXPIPE_DCHECK(panels >= 1 && panels <= 2 && cols >= 1 && cols <= max_cols && kc >= 0);
    narrow_cols<max_cols>(cols, [&](auto p) {
        constexpr int P = decltype(p)::value;
        if (panels == 2) {
            tile<2, P>(kc, a, a_next, b, b_off, t, accumulate);
        } else {
            tile<1, P>(kc, a, a_next, b, b_off, t, accumulate);
        }
    });
}

}  // namespace flexpipe
