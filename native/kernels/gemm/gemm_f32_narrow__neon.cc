// SPDX-License-Identifier: Apache-2.0
// NEON narrow GEMM micro-kernel (contract in narrow.h): one panel (16 rows, four q registers) by up
// to 6 columns, 24 accumulators. Per k step: four loads of A and one ld1r of B per column feeding
// all four quarters: 10 loads per 24 FMAs.
#include <arm_neon.h>

#include <cstddef>
#include <utility>

#include "common/macros.h"
#include "kernels/gemm/narrow.h"

namespace flexpipe {

namespace {

constexpr int max_cols = 6;

template <int P, size_t... Js>
__attribute__((always_inline)) inline void step(std::index_sequence<Js...>, float32x4_t (&acc)[P][4],
                                                const float32x4_t (&av)[4], const float* b) {
    auto one = [&](auto j) {
        constexpr int J = decltype(j)::value;
        const float32x4_t bj = vld1q_dup_f32(b + J);
        for (int q = 0; q < 4; ++q) acc[J][q] = vfmaq_f32(acc[J][q], av[q], bj);
    };
    (one(std::integral_constant<int, static_cast<int>(Js)>{}), ...);
}

template <int P>
void tile(int64_t kc, const float* a, const float* b, const int64_t* b_off, float* t, bool accumulate) {
    float32x4_t acc[P][4];
    for (int j = 0; j < P; ++j)
        for (int q = 0; q < 4; ++q) acc[j][q] = accumulate ? vld1q_f32(t + j * narrow_ldt + 4 * q) : vdupq_n_f32(0.0f);
    for (int64_t p = 0; p < kc; ++p, a += 16) {
        const float32x4_t av[4] = {vld1q_f32(a), vld1q_f32(a + 4), vld1q_f32(a + 8), vld1q_f32(a + 12)};
        step<P>(std::make_index_sequence<P>{}, acc, av, b + b_off[p]);
    }
    for (int j = 0; j < P; ++j)
        for (int q = 0; q < 4; ++q) vst1q_f32(t + j * narrow_ldt + 4 * q, acc[j][q]);
}

}  // namespace

void gemm_f32_narrow__neon(int64_t panels, int64_t cols, int64_t kc, const float* a, int64_t a_next,
                           const float* b, const int64_t* b_off, float* t, bool accumulate) {
    FLEXPIPE_DCHECK(panels >= 1 && panels <= 2 && cols >= 1 && cols <= max_cols && kc >= 0);
    narrow_each_panel<max_cols>(panels, cols, [&](auto p, int64_t v) {
        tile<decltype(p)::value>(kc, a + v * a_next, b, b_off, t + v * narrow_panel_rows, accumulate);
    });
}

}  // namespace flexpipe
