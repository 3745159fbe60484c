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

}  // namespace flexpipe
