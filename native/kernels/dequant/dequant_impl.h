// SPDX-License-Identifier: Apache-2.0
// The driver every SIMD dequant variant shares (contract in dequant.h): the bitwidth switch, the unaligned
// head and the tail on __ref, and the groups of 8 weights between (k bytes from a multiple of 8 weights)
// on the ISA's group kernel. An ISA provides Group<k> (k = 2..8): constructed once per call from the
// centroids (its tables), group(p, out) writes the 8 floats of the group at p, reading p[0, 8) (so the
// loop stops 8 bytes before the end of the readable bytes), and `unroll` groups per loop step.
// Internal linkage (anonymous namespace; STYLE.md §3).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/macros.h"
#include "kernels/dequant/dequant.h"

namespace flexpipe {
namespace {

// fn(std::integral_constant<int, k>{}) for bits k in 2..8, so a kernel is written once as a template on k.
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

template <template <int> class Group>
void dequant_groups(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end, float* out) {
    FLEXPIPE_DCHECK(bits >= 2 && bits <= 8 && begin >= 0 && begin <= end);
    with_dequant_bits(bits, [&](auto kk) {
        constexpr int k = decltype(kk)::value, U = Group<k>::unroll;
        const Group<k> group(centroids);
        int64_t i = (begin + 7) & ~int64_t{7};
        if (i > end) i = end;
        dequant_f32__ref(packed, k, centroids, begin, i, out);
        const int64_t readable = (end * k + 7) >> 3;  // bytes the contract lets us read
        if constexpr (U > 1) {
            for (; i + 8 * U <= end && (i >> 3) * k + (U - 1) * k + 8 <= readable; i += 8 * U)
                for (int u = 0; u < U; ++u) group(packed + ((i >> 3) + u) * k, out + (i - begin) + 8 * u);
        }
        for (; i + 8 <= end && (i >> 3) * k + 8 <= readable; i += 8) group(packed + (i >> 3) * k, out + (i - begin));
        dequant_f32__ref(packed, k, centroids, i, end, out + (i - begin));
    });
}

}  // namespace
}  // namespace flexpipe
