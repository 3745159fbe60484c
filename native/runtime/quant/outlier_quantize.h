// SPDX-License-Identifier: Apache-2.0
// Gaussian outlier-aware dictionary quantization (STI) of one layer into FPQ1 shard blobs (elastic spec §3).
//
// How it works, for a layer of n weights (the concatenation of its shards) and a bitwidth k:
//  1. Fit: mean and population std in float64, two passes (sum, then centered squares). Partial sums
//     are per fixed 64Ki-weight chunk and added in chunk order, so the results do not depend on the
//     thread count. A non-finite weight is an error (it has no place in a sorted order).
//  2. Outliers: w is one when ll(w) = ll0 - d*d / (2 std^2) < threshold, with d = w - mean and
//     ll0 = -0.5 ln(2 pi std^2), evaluated in double exactly in this order (lib/package/quant-blob.ts
//     and the tests do the same). With std = 0 every ll is NaN, so a constant layer has no outliers.
//  3. Clusters: the m non-outliers, sorted ascending by (value, position) (-0 counts as +0), are cut by
//     rank: rank r goes to cluster floor(r * 2^k / m), so cluster sizes differ by at most one and
//     equal values split across a cut in position order. The sort runs on a copy, as 64-bit keys
//     (orderable float bits << 32 | position): one pass distributes them into ~m/32 equal-width value
//     buckets over the non-outlier range (a monotone map, so bucket order is value order), then
//     std::sort sorts each bucket, buckets in parallel. The result is the same (keys are distinct) as
//     one std::sort of all m keys, at a third of its time for a 786432-weight layer (18 vs 56 ms of CPU
//     here); a layer whose values crowd into few buckets degrades towards that one sort.
//     A centroid is the float64 mean of its members summed in rank order, stored as f32; a cluster
//     is empty only when m < 2^k, and its centroid is then 0 (no weight refers to it).
//  4. Blobs: shard s holds weights [s*n/shards, (s+1)*n/shards) with its own outliers (ascending
//     shard-local positions) and every shard carries the layer's centroids.
// Memory: 8 bytes per non-outlier (keys), one byte per weight (cluster indices) and 8 bytes per bucket
// and thread, allocated with nothrow new (out_of_memory instead of an abort; engine code has no
// exceptions). The quantizer reads the layer in place: it must not change until write_blobs returns.
#pragma once

#include <cstdint>
#include <memory>

#include "common/status.h"

namespace flexpipe {

struct OutlierQuantizeOptions {
    int shards = 1;
    int bits = 4;             // 2..8
    double threshold = -4.0;  // log-likelihood below which a weight is an outlier (finite)
    int threads = 1;
};

class OutlierQuantizer {
  public:
    // Steps 1-3. invalid_argument for bad options, n not a positive multiple of shards, a shard over
    // 2^32 - 1 weights or a non-finite weight; out_of_memory if scratch cannot be allocated.
    Status fit(const float* w, int64_t n, const OutlierQuantizeOptions& options);

    double mean() const { return mean_; }
    double stddev() const { return std_; }
    int64_t outliers() const { return outliers_; }
    const float* centroids() const { return centroids_; }
    int64_t shard_weights() const { return n_ / options_.shards; }
    int64_t shard_outliers(int s) const { return shard_outliers_[s]; }
    // quant_blob_bytes of shard s.
    uint64_t shard_bytes(int s) const;
    // Step 4: writes every shard's blob, blobs[s] having shard_bytes(s) bytes (shards in parallel).
    void write_blobs(uint8_t* const* blobs) const;

  private:
    bool is_outlier(float w) const {
        const double d = static_cast<double>(w) - mean_;
        return ll0_ - d * d / denom_ < options_.threshold;
    }
    Status fit_gaussian();
    Status cluster();
    void write_blob(int s, uint8_t* blob) const;

    const float* w_ = nullptr;
    int64_t n_ = 0;
    OutlierQuantizeOptions options_;
    double mean_ = 0.0, std_ = 0.0, ll0_ = 0.0, denom_ = 0.0;
    float min_ = 0.0f, max_ = 0.0f;
    int64_t outliers_ = 0;
    float centroids_[256] = {0};
    std::unique_ptr<uint8_t[]> codes_;  // cluster index per weight, 0 for outliers
    std::unique_ptr<int64_t[]> shard_outliers_;
};

}  // namespace flexpipe
