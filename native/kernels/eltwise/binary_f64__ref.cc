// SPDX-License-Identifier: Apache-2.0
// Binary elementwise functions on float64 rows (scalar reference).
#include "kernels/eltwise/binary_impl.h"

namespace flexpipe {

void binary_f64__ref(BinaryOp op, const double* a, int64_t sa, const double* b, int64_t sb, double* y,
                     int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::binary_float<double>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
