// SPDX-License-Identifier: Apache-2.0
// Normalization kernels (float32): per-channel affine, moments, layer norm rows, LRN, strided MVN.
//
// Statistics accumulate in double (two passes: mean, then centered squares), so results do not
// depend on the magnitude of the mean; the ops in runtime/ops/nn_norm.cc combine these pieces into
// BatchNormalization, InstanceNormalization, LayerNormalization, LRN and MeanVarianceNormalization.
// Every kernel is single-threaded over the range it is given.
#pragma once

#include <cstdint>

namespace flexpipe {

// y[i] = x[i] * a + b for i in [0, n).
void scale_shift_f32__ref(const float* x, float* y, int64_t n, float a, float b);

// Mean and population variance of x[0..n).
void moments_f32__ref(const float* x, int64_t n, double* mean, double* var);

// One row of LayerNormalization: y = (x - mean) * inv_std * w + b, inv_std = 1 / sqrt(var + epsilon).
// w has n elements, or 1 (broadcast); b likewise or null. mean/inv_std outputs may be null.
void layernorm_row_f32__ref(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                            int64_t b_n, float epsilon, float* mean_out, float* inv_std_out);

using LayerNormRowFn = void (*)(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                                int64_t b_n, float epsilon, float* mean_out, float* inv_std_out);

// SIMD variants of layernorm_row_f32__ref (same contract). Accumulation: the mean is summed in
// double lanes (a large common offset costs nothing) and rounded to float as the ref rounds it; the
// variance is a second, centered pass in four float vector accumulators (relative error
// <= (n/32 + 2) * 2^-24); inv_std = 1/sqrt(var + eps) in double, rounded to float. Every variant, ref
// included, is tested to |y - exact| <= 2^-24 * (|w| inv (|x - mean| (n/64 + 8) + 2 |mean|) + 2 |b|);
// the 2|mean| term is the rounding of the mean to float, common to all variants.
void layernorm_row_f32__avx2(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                             int64_t b_n, float epsilon, float* mean_out, float* inv_std_out);
void layernorm_row_f32__neon(const float* x, float* y, int64_t n, const float* w, int64_t w_n, const float* b,
                             int64_t b_n, float epsilon, float* mean_out, float* inv_std_out);

// LRN across channels for one batch item: x and y are [channels, inner].
// y = x / (bias + alpha / size * sum_{c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]} x[c']^2)^beta
void lrn_f32__ref(const float* x, float* y, int64_t channels, int64_t inner, int64_t size, float alpha,
                  float beta,
                  float bias);

// MeanVarianceNormalization over one group of elements of x at base + sum_r idx_r * strides[r]
// (idx_r < dims[r], nr <= 8 reduced axes): y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9).
void mvn_f32__ref(const float* x, float* y, int64_t base, const int64_t* dims, const int64_t* strides,
                  int nr);

}  // namespace flexpipe
