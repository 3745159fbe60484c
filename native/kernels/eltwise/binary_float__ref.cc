// SPDX-License-Identifier: Apache-2.0
// Binary elementwise functions on float32, float64 and float16 rows (float16 computed in float): the
// scalar references, binary_impl.h's template per storage type.
#include "kernels/eltwise/binary_impl.h"

namespace flexpipe {

void binary_f32__ref(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::binary_float<float>(op, a, sa, b, sb, y, n);
}

void binary_f64__ref(BinaryOp op, const double* a, int64_t sa, const double* b, int64_t sb, double* y, int64_t n) {
    eltwise_detail::binary_float<double>(op, a, sa, b, sb, y, n);
}

void binary_f16__ref(BinaryOp op, const Half* a, int64_t sa, const Half* b, int64_t sb, Half* y, int64_t n) {
    eltwise_detail::binary_float<Half>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
