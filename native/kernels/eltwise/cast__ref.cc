// SPDX-License-Identifier: Apache-2.0
// Cast rows between every pair of known dtypes (scalar reference).
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

void cast__ref(DType src, DType dst, const void* x, void* y, int64_t n) {
    using namespace eltwise_detail;
    FLEXPIPE_DCHECK(n >= 0);
    visit_dtype(src, [&](auto tag_s) {
        using S = typename decltype(tag_s)::type;
        visit_dtype(dst, [&](auto tag_d) {
            using D = typename decltype(tag_d)::type;
            const S* xs = static_cast<const S*>(x);
            D* ys = static_cast<D*>(y);
            for (int64_t i = 0; i < n; ++i) {
                ys[i] = Elem<D>::store(convert<typename Elem<D>::C>(Elem<S>::load(xs[i])));
            }
        });
    });
}

}  // namespace flexpipe
