// SPDX-License-Identifier: Apache-2.0
// The FPQ1 quantized shard blob: layout, size, header writing and a bounds-checked parse.
//
// Little-endian (elastic spec §3; the TypeScript mirror is lib/package/quant-blob.ts):
//   offset 0   char[4] magic "FPQ1"
//          4   u32 bits        2..8
//          8   u32 count       number of weights
//          12  u32 outliers    number of outliers
//          16  u32 reserved[4] = 0
//          32  f32 centroids[1 << bits]      the layer's centroids for this bitwidth
//              u32 outlier_index[outliers]   strictly ascending, < count
//              f32 outlier_value[outliers]   exact original values
//              u8  packed[ceil(count*bits/8)]  k-bit indices, LSB-first (kernels/dequant/dequant.h);
//                                             an outlier's index is 0
//              zero padding to a multiple of 4 bytes
// A weight dequantizes to its outlier value if it has one, else to centroids[index]. Fields are read
// with memcpy (a blob may sit at any byte offset); the engine's targets are little-endian hosts.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/status.h"

namespace flexpipe {

constexpr uint32_t quant_blob_header_bytes = 32;
constexpr int quant_bits_min = 2;
constexpr int quant_bits_max = 8;

// ceil(count * bits / 8).
inline uint64_t quant_packed_bytes(uint64_t count, int bits) {
    return (count * bits + 7) / 8;
}

// 32 + 4 * 2^bits + 8 * outliers + roundUp4(ceil(count * bits / 8)).
inline uint64_t quant_blob_bytes(uint64_t count, int bits, uint64_t outliers) {
    return quant_blob_header_bytes + (uint64_t{4} << bits) + 8 * outliers +
           ((quant_packed_bytes(count, bits) + 3) & ~uint64_t{3});
}

// A parsed blob: pointers into the caller's bytes.
struct QuantBlobView {
    int bits = 0;
    uint32_t count = 0;
    uint32_t outliers = 0;
    const uint8_t* centroids = nullptr;      // f32[1 << bits]
    const uint8_t* outlier_index = nullptr;  // u32[outliers]
    const uint8_t* outlier_value = nullptr;  // f32[outliers]
    const uint8_t* packed = nullptr;         // quant_packed_bytes(count, bits) bytes

    uint32_t index_at(uint32_t j) const {
        uint32_t v;
        std::memcpy(&v, outlier_index + 4 * static_cast<uint64_t>(j), 4);
        return v;
    }
    float value_at(uint32_t j) const {
        float v;
        std::memcpy(&v, outlier_value + 4 * static_cast<uint64_t>(j), 4);
        return v;
    }
};

// Checks the magic, bits (2..8 and equal to expect_bits), the reserved words, that `bytes` holds at
// least quant_blob_bytes(count, bits, outliers) (a blob may sit in a larger slot), and that the
// outlier indices are strictly ascending and below count. invalid_argument with the reason otherwise.
Status quant_blob_parse(const uint8_t* data, uint64_t bytes, int expect_bits, QuantBlobView* out);

// Writes the 32-byte header (magic, bits, count, outliers, zero reserved words).
void quant_blob_write_header(uint8_t* data, int bits, uint32_t count, uint32_t outliers);

}  // namespace flexpipe
