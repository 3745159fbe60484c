// SPDX-License-Identifier: Apache-2.0
// The bitwidth switch every SIMD dequant variant shares: calls fn(std::integral_constant<int, k>{})
// for bits k in 2..8, so each variant writes its kernel once as a template on k.
#pragma once

#include <type_traits>

namespace flexpipe {

template <typename Fn>
inline void with_dequant_bits(int bits, Fn&& fn) {
    switch (bits) {
        case 2: return fn(std::integral_constant<int, 2>{});
        case 3: return fn(std::integral_constant<int, 3>{});
        case 4: return fn(std::integral_constant<int, 4>{});
        case 5: return fn(std::integral_constant<int, 5>{});
        case 6: return fn(std::integral_constant<int, 6>{});
        case 7: return fn(std::integral_constant<int, 7>{});
        default: return fn(std::integral_constant<int, 8>{});
    }
}

}  // namespace flexpipe
