// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), AVX2 + FMA: two
// passes of 8 output channels.
#include <immintrin.h>

#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {
namespace {

struct Avx2PanelOps {
    using V = __m256;
    static constexpr int lanes = 8;
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, float s) { return _mm256_mul_ps(a, _mm256_set1_ps(s)); }
    static V madd(V a, float s, V c) { return _mm256_fmadd_ps(a, _mm256_set1_ps(s), c); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};

}  // namespace

void winograd_f32_f63_filter_panel__avx2(const float* a, int64_t C, float* u) {
    filter_panel<Avx2PanelOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__avx2(const float* a, int64_t C, float* u) {
    filter_panel<Avx2PanelOps, 4>(a, C, u);
}

}  // namespace flexpipe
