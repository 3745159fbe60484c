// SPDX-License-Identifier: Apache-2.0
// Pow with base and exponent of different dtypes (scalar reference); the result has the base's dtype.
#include "kernels/eltwise/eltwise_impl.h"

namespace flexpipe {

namespace {

using namespace eltwise_detail;

template <typename TX, typename TY>
void pow_row(const TX* x, int64_t sx, const TY* y, int64_t sy, TX* z, int64_t n) {
    using CX = typename Elem<TX>::C;
    using CY = typename Elem<TY>::C;
    for (int64_t i = 0; i < n; ++i) {
        const CX b = Elem<TX>::load(x[i * sx]);
        const CY e = Elem<TY>::load(y[i * sy]);
        if constexpr (std::is_integral_v<CX> && std::is_integral_v<CY>) {
            // exponents beyond int64 saturate; they only matter for |base| <= 1
            z[i] = int_pow(b, convert<int64_t>(e));
        } else {
            z[i] = Elem<TX>::store(convert<CX>(std::pow(static_cast<double>(b), static_cast<double>(e))));
        }
    }
}

}  // namespace

void pow__ref(DType tx, DType ty, const void* x, int64_t sx, const void* y, int64_t sy, void* z, int64_t n) {
    FLEXPIPE_DCHECK(n >= 0 && tx != DType::boolean && ty != DType::boolean);
    visit_dtype(tx, [&](auto tag_x) {
        using TX = typename decltype(tag_x)::type;
        visit_dtype(ty, [&](auto tag_y) {
            using TY = typename decltype(tag_y)::type;
            if constexpr (!std::is_same_v<TX, Bool8> && !std::is_same_v<TY, Bool8>) {
                pow_row(static_cast<const TX*>(x), sx, static_cast<const TY*>(y), sy, static_cast<TX*>(z), n);
            }
        });
    });
}

}  // namespace flexpipe
