// SPDX-License-Identifier: Apache-2.0
// Binary elementwise functions on float16 rows, computed in float (scalar reference).
#include "kernels/eltwise/binary_impl.h"

namespace flexpipe {

void binary_f16__ref(BinaryOp op, const Half* a, int64_t sa, const Half* b, int64_t sb, Half* y, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::binary_float<Half>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
