// SPDX-License-Identifier: Apache-2.0
// Binary elementwise functions on integer rows, bool included as uint8 (scalar reference).
#include "kernels/eltwise/binary_impl.h"

namespace flexpipe {

void binary_int__ref(DType t, BinaryOp op, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                     int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    if (t == DType::boolean) t = DType::u8;
    eltwise_detail::visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>) {
            eltwise_detail::binary_int<T>(op, static_cast<const T*>(a), sa, static_cast<const T*>(b), sb,
                                          static_cast<T*>(y), n);
        } else {
            FLEXPIPE_DCHECK(false);
        }
    });
}

}  // namespace flexpipe
