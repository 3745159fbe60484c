// SPDX-License-Identifier: Apache-2.0
// FPQ1 header writing and the bounds-checked parse.
#include "runtime/quant/quant_blob.h"

namespace flexpipe {

static const char quant_magic[4] = {'F', 'P', 'Q', '1'};

static uint32_t u32_at(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

Status quant_blob_parse(const uint8_t* data, uint64_t bytes, int expect_bits, QuantBlobView* out) {
    FLEXPIPE_CHECK_ARG(data != nullptr && bytes >= quant_blob_header_bytes,
                       "failed to read FPQ1 blob: shorter than its 32-byte header (bytes=%llu)",
                       static_cast<unsigned long long>(bytes));
    FLEXPIPE_CHECK_ARG(std::memcmp(data, quant_magic, 4) == 0,
                       "failed to read FPQ1 blob: bad magic (bytes 0..3 = %02x %02x %02x %02x)", data[0],
                       data[1], data[2], data[3]);
    const uint32_t bits = u32_at(data + 4), count = u32_at(data + 8), outliers = u32_at(data + 12);
    FLEXPIPE_CHECK_ARG(bits >= quant_bits_min && bits <= quant_bits_max,
                       "failed to read FPQ1 blob: bits must be 2..8 (bits=%u)", bits);
    FLEXPIPE_CHECK_ARG(static_cast<int>(bits) == expect_bits,
                       "failed to read FPQ1 blob: bits do not match the op (blob bits=%u, op bits=%d)", bits,
                       expect_bits);
    for (int r = 0; r < 4; ++r) {
        FLEXPIPE_CHECK_ARG(u32_at(data + 16 + 4 * r) == 0,
                           "failed to read FPQ1 blob: reserved word %d is not 0", r);
    }
    FLEXPIPE_CHECK_ARG(outliers <= count,
                       "failed to read FPQ1 blob: more outliers than weights (outliers=%u, count=%u)",
                       outliers, count);
    const uint64_t need = quant_blob_bytes(count, static_cast<int>(bits), outliers);
    FLEXPIPE_CHECK_ARG(
        bytes >= need,
        "failed to read FPQ1 blob: truncated (bytes=%llu, need=%llu for count=%u, bits=%u, outliers=%u)",
        static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(need), count, bits, outliers);
    QuantBlobView v;
    v.bits = static_cast<int>(bits);
    v.count = count;
    v.outliers = outliers;
    v.centroids = data + quant_blob_header_bytes;
    v.outlier_index = v.centroids + (uint64_t{4} << bits);
    v.outlier_value = v.outlier_index + 4 * static_cast<uint64_t>(outliers);
    v.packed = v.outlier_value + 4 * static_cast<uint64_t>(outliers);
    for (uint32_t j = 0; j < outliers; ++j) {
        const uint32_t i = v.index_at(j);
        FLEXPIPE_CHECK_ARG(
            i < count,
            "failed to read FPQ1 blob: outlier index out of range (outlier=%u, index=%u, count=%u)", j, i,
            count);
        FLEXPIPE_CHECK_ARG(j == 0 || i > v.index_at(j - 1),
                           "failed to read FPQ1 blob: outlier indices not strictly ascending (outlier=%u, "
                           "index=%u, previous=%u)",
                           j, i, v.index_at(j - 1));
    }
    *out = v;
    return Status::ok();
}

void quant_blob_write_header(uint8_t* data, int bits, uint32_t count, uint32_t outliers) {
    const uint32_t words[7] = {static_cast<uint32_t>(bits), count, outliers, 0, 0, 0, 0};
    std::memcpy(data, quant_magic, 4);
    std::memcpy(data + 4, words, sizeof(words));
}

}  // namespace flexpipe
