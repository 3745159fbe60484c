// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), AVX-512F: the whole
// panel row in one zmm.
#include <immintrin.h>

#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {
namespace {

struct Avx512PanelOps {
    using V = __m512;
    static constexpr int lanes = 16;
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V mul(V a, float s) { return _mm512_mul_ps(a, _mm512_set1_ps(s)); }
    static V madd(V a, float s, V c) { return _mm512_fmadd_ps(a, _mm512_set1_ps(s), c); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};

}  // namespace

void winograd_f32_f63_filter_panel__avx512(const float* a, int64_t C, float* u) {
    filter_panel<Avx512PanelOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__avx512(const float* a, int64_t C, float* u) {
    filter_panel<Avx512PanelOps, 4>(a, C, u);
}

}  // namespace flexpipe
