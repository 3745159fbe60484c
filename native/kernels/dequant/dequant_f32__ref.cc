// SPDX-License-Identifier: Apache-2.0
// Reference dequantization: one index at a time, read from the one or two bytes it spans.
#include "common/macros.h"
#include "kernels/dequant/dequant.h"

namespace flexpipe {

void dequant_f32__ref(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                      float* out) {
    FLEXPIPE_DCHECK(bits >= 2 && bits <= 8 && begin >= 0 && begin <= end);
    const unsigned mask = (1u << bits) - 1u;
    for (int64_t i = begin; i < end; ++i) {
        const uint64_t bit = static_cast<uint64_t>(i) * static_cast<uint64_t>(bits);
        const uint64_t byte = bit >> 3;
        const unsigned shift = static_cast<unsigned>(bit & 7);
        unsigned v = packed[byte] >> shift;
        if (shift + static_cast<unsigned>(bits) > 8)
            v |= static_cast<unsigned>(packed[byte + 1]) << (8 - shift);
        out[i - begin] = centroids[v & mask];
    }
}

}  // namespace flexpipe
