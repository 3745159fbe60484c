// SPDX-License-Identifier: Apache-2.0
// Unary elementwise functions on float64 rows (scalar reference).
#include "kernels/eltwise/unary_impl.h"

namespace flexpipe {

void unary_f64__ref(UnaryOp op, const UnaryParams& p, const double* x, double* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::unary_float<double>(op, p, x, y, n);
}

}  // namespace flexpipe
