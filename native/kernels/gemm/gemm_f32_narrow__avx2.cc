// SPDX-License-Identifier: Apache-2.0
// AVX2+FMA narrow GEMM micro-kernel (contract in narrow.h): one panel (16 rows, two ymm) by up to 6
// columns, 12 ymm accumulators. Per k step: two loads of A and one broadcast of B per column feeding
// both halves: 8 loads per 12 FMAs.
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"

namespace flexpipe {

namespace {

constexpr int max_cols = 6;

template <int P, size_t... Js>
__attribute__((always_inline)) inline void step(std::index_sequence<Js...>, __m256 (&acc)[P][2], __m256 a0, __m256 a1,
                                                const float* b) {
    auto one = [&](auto j) {
        constexpr int J = decltype(j)::value;
        const __m256 bj = _mm256_broadcast_ss(b + J);
        acc[J][0] = _mm256_fmadd_ps(a0, bj, acc[J][0]);
        acc[J][1] = _mm256_fmadd_ps(a1, bj, acc[J][1]);
    };
    (one(std::integral_constant<int, static_cast<int>(Js)>{}), ...);
}

template <int P>
void tile(int64_t kc, const float* a, const float* b, const int64_t* b_off, float* t, bool accumulate) {
    __m256 acc[P][2];
#pragma GCC unroll 6
    for (int j = 0; j < P; ++j) {
        acc[j][0] = accumulate ? _mm256_loadu_ps(t + j * narrow_ldt) : _mm256_setzero_ps();
        acc[j][1] = accumulate ? _mm256_loadu_ps(t + j * narrow_ldt + 8) : _mm256_setzero_ps();
    }
    for (int64_t p = 0; p < kc; ++p, a += 16)
        step<P>(std::make_index_sequence<P>{}, acc, _mm256_loadu_ps(a), _mm256_loadu_ps(a + 8), b + b_off[p]);
#pragma GCC unroll 6
    for (int j = 0; j < P; ++j) {
        _mm256_storeu_ps(t + j * narrow_ldt, acc[j][0]);
        _mm256_storeu_ps(t + j * narrow_ldt + 8, acc[j][1]);
    }
}

}  // namespace

void gemm_f32_narrow__avx2(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate) {
    FLEXPIPE_DCHECK(panels >= 1 && panels <= 2 && cols >= 1 && cols <= max_cols && kc >= 0);
    narrow_each_panel<max_cols>(panels, cols, [&](auto p, int64_t v) {
        tile<decltype(p)::value>(kc, a + v * a_next, b, b_off, t + v * narrow_panel_rows, accumulate);
    });
}

}  // namespace flexpipe
