// SPDX-License-Identifier: Apache-2.0
// Comparison rows for every dtype, 0/1 results (scalar reference).
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

namespace {

using namespace eltwise_detail;

template <typename T>
void compare_row(CompareOp op, const T* a, int64_t sa, const T* b, int64_t sb, Bool8* y, int64_t n) {
    using C = typename Elem<T>::C;
    switch (op) {
        case CompareOp::equal: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u == v; });
        case CompareOp::less: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u < v; });
        case CompareOp::greater: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u > v; });
        case CompareOp::less_equal: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u <= v; });
        case CompareOp::greater_equal: return map2(a, sa, b, sb, y, n, [](C u, C v) { return u >= v; });
        default: FLEXPIPE_DCHECK(false); return;
    }
}

}  // namespace

void compare__ref(DType t, CompareOp op, const void* a, int64_t sa, const void* b, int64_t sb, uint8_t* y,
                  int64_t n) {
    FLEXPIPE_DCHECK(n >= 0);
    visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        compare_row(op, static_cast<const T*>(a), sa, static_cast<const T*>(b), sb,
                    reinterpret_cast<Bool8*>(y), n);
    });
}

}  // namespace flexpipe
