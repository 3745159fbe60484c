// SPDX-License-Identifier: Apache-2.0
// Unary elementwise functions on float32, float64 and float16 rows (float16 computed in float): the
// scalar references, unary_impl.h's template per storage type.
#include "kernels/eltwise/unary_impl.h"

namespace flexpipe {

void unary_f32__ref(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::unary_float<float>(op, p, x, y, n);
}

void unary_f64__ref(UnaryOp op, const UnaryParams& p, const double* x, double* y, int64_t n) {
    eltwise_detail::unary_float<double>(op, p, x, y, n);
}

void unary_f16__ref(UnaryOp op, const UnaryParams& p, const Half* x, Half* y, int64_t n) {
    eltwise_detail::unary_float<Half>(op, p, x, y, n);
}

}  // namespace flexpipe
