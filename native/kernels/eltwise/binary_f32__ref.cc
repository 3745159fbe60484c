// SPDX-License-Identifier: Apache-2.0
// Binary elementwise functions on float32 rows (scalar reference).
#include "kernels/eltwise/binary_impl.h"

namespace flexpipe {

void binary_f32__ref(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                     int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    eltwise_detail::binary_float<float>(op, a, sa, b, sb, y, n);
}

}  // namespace flexpipe
