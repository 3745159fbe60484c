// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax and Hardmax (float32) along one axis of n elements spaced `stride` apart.
//
// Each call handles one vector (x[i * stride], i < n): the driver walks the outer and inner index
// ranges and splits them over threads. Softmax subtracts the maximum first (so large inputs do not
// overflow) and accumulates the sum in double. Hardmax writes 1 at the first maximum, 0 elsewhere.
#pragma once

#include <cstdint>

namespace flexpipe {

using SoftmaxFn = void (*)(const float* x, float* y, int64_t n, int64_t stride);
void softmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride);
void logsoftmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride);
void hardmax_f32__ref(const float* x, float* y, int64_t n, int64_t stride);

// SIMD Softmax for stride 1 (other strides run the ref): max (a NaN element is skipped, as the ref
// does), y = exp(x - max) with the vector exp (8.5e-8 relative, kernels/eltwise/eltwise.h), the sum in
// four float vector accumulators (32 lanes on AVX2, 16 on NEON), then y *= 1/sum. Every variant, ref
// included, is tested to |y - exact| <= exact * (2^-22 + (n/16 + 8) * 2^-24); NaN, +inf and all -inf
// inputs give what the ref gives (all NaN).
void softmax_f32__avx2(const float* x, float* y, int64_t n, int64_t stride);
void softmax_f32__neon(const float* x, float* y, int64_t n, int64_t stride);

}  // namespace flexpipe
