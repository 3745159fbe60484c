// SPDX-License-Identifier: Apache-2.0
// Clip rows of any numeric dtype to [lo, hi] (scalar reference).
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

void clip__ref(DType t, const void* x, void* y, int64_t n, const void* lo, const void* hi) {
    using namespace eltwise_detail;
    FLEXPIPE_DCHECK(n >= 0);
    visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = typename Elem<T>::C;
        const C l = Elem<T>::load(*static_cast<const T*>(lo));
        const C h = Elem<T>::load(*static_cast<const T*>(hi));
        // comparisons with NaN are false, so NaN passes through (numpy.clip does the same)
        map1(static_cast<const T*>(x), static_cast<T*>(y), n, [=](C v) {
            const C u = v < l ? l : v;
            return u > h ? h : u;
        });
    });
}

void clip_f32__ref(const float* x, float* y, int64_t n, float lo, float hi) { clip__ref(DType::f32, x, y, n, &lo, &hi); }

}  // namespace flexpipe
