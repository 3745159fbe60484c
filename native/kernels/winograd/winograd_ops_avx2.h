// SPDX-License-Identifier: Apache-2.0
// The vector ops of winograd_impl.h's transforms over AVX2 + FMA (8 lanes), shared by the AVX2 files
// (include only from *__avx2.cc: internal linkage, built with AVX2 enabled).
#pragma once

#include <immintrin.h>

namespace flexpipe {
namespace {

struct Avx2Ops {
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
}  // namespace flexpipe
