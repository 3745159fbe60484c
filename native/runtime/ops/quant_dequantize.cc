// SPDX-License-Identifier: Apache-2.0
// DequantizeShard: an FPQ1 shard blob (or a raw float32 shard) into the float32 row blocks of a shard.
#include <algorithm>
#include <cstring>

#include "runtime/dispatch.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/ops/ops.h"
#include "runtime/parallel.h"
#include "runtime/quant/quant_blob.h"

namespace flexpipe {

namespace {

constexpr int64_t chunk_weights = 16384;  // unit of the thread split
// Below this many weights the op runs on one thread: a shard (98304 weights) dequantizes in tens of
// microseconds, about what waking a second OpenMP thread costs.
constexpr int64_t serial_below = 1 << 17;

// Weights [begin, end) of the dequantized stream: the kernel for the packed indices, then the outliers
// falling in the range patched over them.
void dequant_range(const QuantBlobView& v, const float* centroids, DequantF32Fn fn, int64_t begin,
                   int64_t end, float* out) {
    fn(v.packed, v.bits, centroids, begin, end, out);
    uint32_t lo = 0, hi = v.outliers;  // first outlier with index >= begin
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (static_cast<int64_t>(v.index_at(mid)) < begin)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t j = lo; j < v.outliers; ++j) {
        const int64_t i = v.index_at(j);
        if (i >= end) break;
        out[i - begin] = v.value_at(j);
    }
}

// Calls fn(begin, end, dst) for the pieces of stream range [begin, end) in each output it overlaps.
template <typename Fn>
void for_each_piece(const OpCall& c, int64_t begin, int64_t end, Fn&& fn) {
    int64_t base = 0;
    for (int o = 0; o < c.n_out && base < end; ++o) {
        const int64_t b = std::max(begin, base), e = std::min(end, base + c.out[o].numel);
        if (b < e) fn(b, e, c.out[o].as<float>() + (b - base));
        base += c.out[o].numel;
    }
}

}  // namespace

// DequantizeShard: input blob (uint8, 1-D); outputs: one or more float32 tensors of any dims whose
// element counts sum to the blob's weight count. ints: [bits] (2..8: an FPQ1 blob, runtime/quant/quant_blob.h;
// 32: the blob is the raw float32 stream). The dequantized stream fills the outputs in order (a shard's
// row blocks). Threads split 16Ki-weight chunks from 128Ki weights on. The header is checked against the op
// and the tensor bytes (magic, bits, reserved words, count = the outputs' total, every offset within the
// blob, outlier indices strictly ascending and below count); the blob may be longer than its content.
// Allocation-free.
Status op_dequantize_shard(const OpCall& c) {
    const TensorView& blob = c.in[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(blob, DType::u8, c.name, "the blob"));
    FLEXPIPE_CHECK_ARG(blob.rank == 1 && (blob.data != nullptr || blob.numel == 0),
                       "failed to run DequantizeShard: the blob must be a 1-D uint8 tensor (rank=%d)",
                       blob.rank);
    int64_t total = 0;
    for (int o = 0; o < c.n_out; ++o) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[o], DType::f32, c.name, "every output"));
        FLEXPIPE_CHECK_ARG(c.out[o].data != nullptr || c.out[o].numel == 0,
                           "failed to run DequantizeShard: output %d has no data", o);
        total += c.out[o].numel;
    }
    const int64_t bits = c.ints[0];
    const int64_t chunks = (total + chunk_weights - 1) / chunk_weights;
    const int threads = total >= serial_below ? c.threads : 1;
    const uint8_t* bytes = blob.as<const uint8_t>();
    if (bits == 32) {
        FLEXPIPE_CHECK_ARG(
            blob.numel >= 4 * total,
            "failed to run DequantizeShard: a raw float32 blob of %lld bytes cannot fill %lld weights",
            static_cast<long long>(blob.numel), static_cast<long long>(total));
        parallel_for(chunks, threads, [&](int64_t c0, int64_t c1) {
            for_each_piece(
                c, c0 * chunk_weights, std::min(total, c1 * chunk_weights),
                [&](int64_t b, int64_t e, float* dst) { std::memcpy(dst, bytes + 4 * b, 4 * (e - b)); });
        });
        return Status::ok();
    }
    FLEXPIPE_CHECK_ARG(bits >= quant_bits_min && bits <= quant_bits_max,
                       "failed to run DequantizeShard: bits must be 2..8 or 32 (bits=%lld)",
                       static_cast<long long>(bits));
    QuantBlobView v;
    FLEXPIPE_RETURN_IF_ERROR(
        quant_blob_parse(bytes, static_cast<uint64_t>(blob.numel), static_cast<int>(bits), &v));
    FLEXPIPE_CHECK_ARG(static_cast<int64_t>(v.count) == total,
                       "failed to run DequantizeShard: the blob holds %u weights, the outputs %lld", v.count,
                       static_cast<long long>(total));
    float centroids[1 << quant_bits_max];  // aligned copy: the blob's table may sit at any byte offset
    std::memcpy(centroids, v.centroids, sizeof(float) << v.bits);
    const DequantF32Fn fn = kernels().quant.dequant_f32;
    parallel_for(chunks, threads, [&](int64_t c0, int64_t c1) {
        for_each_piece(c, c0 * chunk_weights, std::min(total, c1 * chunk_weights),
                       [&](int64_t b, int64_t e, float* dst) { dequant_range(v, centroids, fn, b, e, dst); });
    });
    return Status::ok();
}

}  // namespace flexpipe

namespace flexpipe {

namespace {

constexpr int max_layer_shards = 256;
constexpr int max_layer_blocks = 16;

}  // namespace

// DequantizeLayer: the shards a partial transformer layer runs with, into its weight matrices.
// inputs: m blobs (uint8, 1-D), shard j of the sub-layer; outputs: B float32 matrices [m * r_b, cols_b]
// (B <= 16; for the elastic encoder the six Wq, Wk, Wv, Woᵀ, W1, W2ᵀ); ints: [m, bits_0 .. bits_{m-1}]
// (2..8: FPQ1, 32: raw float32). Shard j's stream is its B row blocks in order, block b being r_b rows
// of cols_b floats; they land at rows [j * r_b, (j + 1) * r_b) of output b, so the stacked rows of the m
// shards are each matrix of the m-shard sub-layer. Every blob is checked as DequantizeShard checks it
// (count = sum_b r_b * cols_b). Threads over (shard, 16Ki-weight chunk) items; allocation-free.
Status op_dequantize_layer(const OpCall& c) {
    FLEXPIPE_CHECK_ARG(c.n_ints >= 1, "failed to run DequantizeLayer: ints must start with the shard count");
    const int64_t m = c.ints[0];
    FLEXPIPE_CHECK_ARG(m >= 1 && m <= max_layer_shards && c.n_in == m && c.n_ints == 1 + m,
                       "failed to run DequantizeLayer: %d blobs and %d ints for %lld shards (need m blobs, "
                       "ints [m, bits x m], 1 <= m <= %d)",
                       c.n_in, c.n_ints, static_cast<long long>(m), max_layer_shards);
    FLEXPIPE_CHECK_ARG(c.n_out >= 1 && c.n_out <= max_layer_blocks,
                       "failed to run DequantizeLayer: 1..%d outputs expected, got %d", max_layer_blocks, c.n_out);
    int64_t block_len[max_layer_blocks];  // floats of block b in one shard
    int64_t count = 0;
    for (int b = 0; b < c.n_out; ++b) {
        const TensorView& o = c.out[b];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(o, DType::f32, c.name, "every output"));
        FLEXPIPE_CHECK_ARG(o.rank == 2 && o.dims[0] % m == 0 && (o.data != nullptr || o.numel == 0),
                           "failed to run DequantizeLayer: output %d must be a [m * rows, cols] matrix", b);
        block_len[b] = o.numel / m;
        count += block_len[b];
    }
    QuantBlobView views[max_layer_shards];
    for (int64_t j = 0; j < m; ++j) {
        const TensorView& blob = c.in[j];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(blob, DType::u8, c.name, "every blob"));
        FLEXPIPE_CHECK_ARG(blob.rank == 1 && blob.data != nullptr,
                           "failed to run DequantizeLayer: blob %lld must be a 1-D uint8 tensor",
                           static_cast<long long>(j));
        const int64_t bits = c.ints[1 + j];
        if (bits == 32) {
            FLEXPIPE_CHECK_ARG(blob.numel >= 4 * count,
                               "failed to run DequantizeLayer: raw float32 blob %lld has %lld bytes, a shard needs %lld",
                               static_cast<long long>(j), static_cast<long long>(blob.numel),
                               static_cast<long long>(4 * count));
            views[j] = QuantBlobView{};
            views[j].bits = 32;
            continue;
        }
        FLEXPIPE_CHECK_ARG(bits >= quant_bits_min && bits <= quant_bits_max,
                           "failed to run DequantizeLayer: bits must be 2..8 or 32 (shard %lld: %lld)",
                           static_cast<long long>(j), static_cast<long long>(bits));
        FLEXPIPE_RETURN_IF_ERROR(quant_blob_parse(blob.as<const uint8_t>(), static_cast<uint64_t>(blob.numel),
                                                  static_cast<int>(bits), &views[j]));
        FLEXPIPE_CHECK_ARG(static_cast<int64_t>(views[j].count) == count,
                           "failed to run DequantizeLayer: blob %lld holds %u weights, a shard has %lld",
                           static_cast<long long>(j), views[j].count, static_cast<long long>(count));
    }
    const int64_t per_shard = (count + chunk_weights - 1) / chunk_weights;
    const int64_t items = m * per_shard;
    const DequantF32Fn fn = kernels().quant.dequant_f32;
    parallel_for(items, items > 1 ? c.threads : 1, [&](int64_t i0, int64_t i1) {
        float centroids[1 << quant_bits_max];
        int64_t loaded = -1;
        for (int64_t item = i0; item < i1; ++item) {
            const int64_t j = item / per_shard;
            const int64_t begin = (item % per_shard) * chunk_weights;
            const int64_t end = std::min(count, begin + chunk_weights);
            const QuantBlobView& v = views[j];
            const uint8_t* raw = c.in[j].as<const uint8_t>();
            if (v.bits != 32 && loaded != j) {
                std::memcpy(centroids, v.centroids, sizeof(float) << v.bits);
                loaded = j;
            }
            int64_t base = 0;
            for (int b = 0; b < c.n_out && base < end; ++b) {
                const int64_t lo = std::max(begin, base), hi = std::min(end, base + block_len[b]);
                if (lo < hi) {
                    float* dst = c.out[b].as<float>() + j * block_len[b] + (lo - base);
                    if (v.bits == 32)
                        std::memcpy(dst, raw + 4 * lo, 4 * (hi - lo));
                    else
                        dequant_range(v, centroids, fn, lo, hi, dst);
                }
                base += block_len[b];
            }
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
