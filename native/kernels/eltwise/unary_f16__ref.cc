// SPDX-License-Identifier: Apache-2.0
// Unary elementwise functions on float16 rows, computed in float (scalar reference).
#include "kernels/eltwise/unary_impl.h"

namespace flexpipe {

void unary_f16__ref(UnaryOp op, const UnaryParams& p, const Half* x, Half* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::unary_float<Half>(op, p, x, y, n);
}

}  // namespace flexpipe
