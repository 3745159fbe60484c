// SPDX-License-Identifier: Apache-2.0
// OutlierQuantizer: Gaussian fit, outliers, rank clusters and FPQ1 blob writing (see outlier_quantize.h).
#include "runtime/quant/outlier_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "runtime/parallel.h"
#include "runtime/quant/quant_blob.h"

namespace flexpipe {

namespace {

constexpr int64_t chunk = int64_t{1} << 16;  // weights per partial sum / per counting unit
constexpr double pi = 3.14159265358979323846;

template <typename T>
std::unique_ptr<T[]> try_alloc(int64_t n) {
    return std::unique_ptr<T[]>(new (std::nothrow) T[static_cast<size_t>(n > 0 ? n : 1)]);
}

Status out_of_memory(const char* what, int64_t n) {
    return Status::error(StatusCode::out_of_memory, "failed to quantize layer: cannot allocate %s (n=%lld)",
                         what, static_cast<long long>(n));
}

// Unsigned order of the key = numeric order of a finite float; -0 maps to +0's key.
inline uint32_t order_key(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    if (b == 0x80000000u) b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

inline float key_value(uint64_t key) {
    const uint32_t k = static_cast<uint32_t>(key >> 32);
    const uint32_t b = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float v;
    std::memcpy(&v, &b, 4);
    return v;
}

inline uint64_t sort_key(float v, int64_t i) {
    return (static_cast<uint64_t>(order_key(v)) << 32) | static_cast<uint64_t>(i);
}

// A monotone map of values to `count` equal-width buckets over [lo, hi] (values outside clamp to the end
// buckets), so concatenating the buckets in order keeps the value order.
struct Buckets {
    int64_t count = 1;
    double lo = 0.0, scale = 0.0;
    int64_t of(float v) const {
        const double x = (static_cast<double>(v) - lo) * scale;
        return x <= 0.0 ? 0 : x >= static_cast<double>(count - 1) ? count - 1 : static_cast<int64_t>(x);
    }
};

// ~32 keys per bucket over [lo, hi], the value range of the m keys (at least roughly: values outside
// are clamped into the end buckets, which keeps the order).
Buckets make_buckets(double lo, double hi, int64_t m) {
    Buckets b;
    if (hi > lo) b.count = std::min<int64_t>(std::max<int64_t>(m / 32, 1), int64_t{1} << 18);
    b.lo = lo;
    b.scale = hi > lo ? static_cast<double>(b.count) / (hi - lo) : 0.0;
    return b;
}

}  // namespace

Status OutlierQuantizer::fit(const float* w, int64_t n, const OutlierQuantizeOptions& options) {
    FLEXPIPE_CHECK_ARG(options.bits >= quant_bits_min && options.bits <= quant_bits_max,
                       "failed to quantize layer: bits must be 2..8 (bits=%d)", options.bits);
    FLEXPIPE_CHECK_ARG(options.shards >= 1, "failed to quantize layer: shards must be >= 1 (shards=%d)",
                       options.shards);
    FLEXPIPE_CHECK_ARG(std::isfinite(options.threshold),
                       "failed to quantize layer: threshold must be finite (threshold=%g)",
                       options.threshold);
    FLEXPIPE_CHECK_ARG(w != nullptr && n > 0 && n % options.shards == 0,
                       "failed to quantize layer: length must be a positive multiple of the shard count "
                       "(length=%lld, shards=%d)",
                       static_cast<long long>(n), options.shards);
    FLEXPIPE_CHECK_ARG(n <= int64_t{0xffffffff},
                       "failed to quantize layer: over 2^32 - 1 weights (length=%lld)",
                       static_cast<long long>(n));
    w_ = w;
    n_ = n;
    options_ = options;
    if (options_.threads < 1) options_.threads = 1;
    FLEXPIPE_RETURN_IF_ERROR(fit_gaussian());
    return cluster();
}

Status OutlierQuantizer::fit_gaussian() {
    const int64_t chunks = (n_ + chunk - 1) / chunk;
    auto part = try_alloc<double>(chunks);
    auto lo = try_alloc<float>(chunks);
    auto hi = try_alloc<float>(chunks);
    if (!part || !lo || !hi) return out_of_memory("partial sums", chunks);
    const float* w = w_;
    const int64_t n = n_;
    // A sum of finite floats stays finite in double (n < 2^32), so a non-finite chunk sum finds them.
    parallel_for(chunks, options_.threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0.0;
            float a = w[c * chunk], b = a;
            for (int64_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i) {
                s += w[i];
                a = std::min(a, w[i]);
                b = std::max(b, w[i]);
            }
            part[c] = s, lo[c] = a, hi[c] = b;
        }
    });
    double sum = 0.0;
    min_ = lo[0], max_ = hi[0];
    for (int64_t c = 0; c < chunks; ++c) {
        if (std::isfinite(part[c])) {
            sum += part[c];
            min_ = std::min(min_, lo[c]), max_ = std::max(max_, hi[c]);
            continue;
        }
        int64_t i = c * chunk;
        while (std::isfinite(w[i])) ++i;
        return Status::error(StatusCode::invalid_argument,
                             "failed to quantize layer: weight %lld is not finite (value=%g)",
                             static_cast<long long>(i), static_cast<double>(w[i]));
    }
    const double mean = sum / static_cast<double>(n);
    parallel_for(chunks, options_.threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0.0;
            for (int64_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i) {
                const double d = static_cast<double>(w[i]) - mean;
                s += d * d;
            }
            part[c] = s;
        }
    });
    double sq = 0.0;
    for (int64_t c = 0; c < chunks; ++c) sq += part[c];
    mean_ = mean;
    std_ = std::sqrt(sq / static_cast<double>(n));
    ll0_ = -0.5 * std::log(2.0 * pi * std_ * std_);
    denom_ = 2.0 * std_ * std_;
    return Status::ok();
}

Status OutlierQuantizer::cluster() {
    const int64_t n = n_, chunks = (n + chunk - 1) / chunk;
    const int threads = options_.threads;
    codes_ = try_alloc<uint8_t>(n);
    shard_outliers_ = try_alloc<int64_t>(options_.shards);
    // Non-outliers lie in the layer's range cut to mean +- sqrt(2 std^2 (ll0 - threshold)), up to rounding.
    double lo = min_, hi = max_;
    const double r = std::sqrt(denom_ * (ll0_ - options_.threshold));
    if (std::isfinite(r)) lo = std::max(lo, mean_ - r), hi = std::min(hi, mean_ + r);
    const Buckets buckets = make_buckets(lo, hi, n);
    const int64_t nb = buckets.count, parts = std::min<int64_t>(threads, chunks);
    auto at = try_alloc<int64_t>(parts * nb);  // per part and bucket: count, then write position
    auto start = try_alloc<int64_t>(nb + 1);
    if (!codes_ || !shard_outliers_ || !at || !start) return out_of_memory("cluster indices", n);
    auto part_range = [&](int64_t p, int64_t* b, int64_t* e) {
        *b = std::min(n, chunks * p / parts * chunk), *e = std::min(n, chunks * (p + 1) / parts * chunk);
    };
    // The sort: the non-outliers' (value, position) keys are distributed into value buckets (a
    // histogram per part of the layer, then each part writes at its own offsets), and every bucket is
    // std::sort-ed on its own. Keys are distinct, so the result is the one sorted order.
    parallel_for(parts, threads, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            int64_t* h = at.get() + p * nb;
            std::fill(h, h + nb, int64_t{0});
            int64_t b, e;
            part_range(p, &b, &e);
            for (int64_t i = b; i < e; ++i) {
                if (is_outlier(w_[i]))
                    codes_[i] = 0;
                else
                    ++h[buckets.of(w_[i])];
            }
        }
    });
    int64_t m = 0;
    for (int64_t k = 0; k < nb; ++k) {
        start[k] = m;
        for (int64_t p = 0; p < parts; ++p) {
            const int64_t count = at[p * nb + k];
            at[p * nb + k] = m;
            m += count;
        }
    }
    start[nb] = m;
    outliers_ = n - m;
    auto keys = try_alloc<uint64_t>(m);
    if (!keys) return out_of_memory("sort keys", m);
    parallel_for(parts, threads, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            int64_t* pos = at.get() + p * nb;
            int64_t b, e;
            part_range(p, &b, &e);
            for (int64_t i = b; i < e; ++i)
                if (!is_outlier(w_[i])) keys[pos[buckets.of(w_[i])]++] = sort_key(w_[i], i);
        }
    });
    parallel_for(nb, threads, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) std::sort(keys.get() + start[k], keys.get() + start[k + 1]);
    });
    const uint64_t* sorted = keys.get();
    // Cluster c holds ranks [ceil(c*m/K), ceil((c+1)*m/K)): exactly the r with floor(r*K/m) = c.
    const int64_t clusters = int64_t{1} << options_.bits;
    parallel_for(clusters, threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            const int64_t r0 = (c * m + clusters - 1) / clusters,
                          r1 = ((c + 1) * m + clusters - 1) / clusters;
            double s = 0.0;
            for (int64_t r = r0; r < r1; ++r) {
                s += key_value(sorted[r]);
                codes_[static_cast<uint32_t>(sorted[r])] = static_cast<uint8_t>(c);
            }
            centroids_[c] = r1 > r0 ? static_cast<float>(s / static_cast<double>(r1 - r0)) : 0.0f;
        }
    });
    const int64_t per_shard = shard_weights();
    parallel_for(options_.shards, threads, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            int64_t count = 0;
            for (int64_t i = s * per_shard; i < (s + 1) * per_shard; ++i) count += is_outlier(w_[i]);
            shard_outliers_[s] = count;
        }
    });
    return Status::ok();
}

uint64_t OutlierQuantizer::shard_bytes(int s) const {
    return quant_blob_bytes(static_cast<uint64_t>(shard_weights()), options_.bits,
                            static_cast<uint64_t>(shard_outliers_[s]));
}

void OutlierQuantizer::write_blobs(uint8_t* const* blobs) const {
    parallel_for(options_.shards, options_.threads, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) write_blob(static_cast<int>(s), blobs[s]);
    });
}

void OutlierQuantizer::write_blob(int s, uint8_t* blob) const {
    const int bits = options_.bits;
    const int64_t count = shard_weights(), base = s * count, outliers = shard_outliers_[s];
    quant_blob_write_header(blob, bits, static_cast<uint32_t>(count), static_cast<uint32_t>(outliers));
    uint8_t* p = blob + quant_blob_header_bytes;
    std::memcpy(p, centroids_, sizeof(float) << bits);
    p += sizeof(float) << bits;
    uint8_t* index = p;
    uint8_t* value = p + 4 * outliers;
    const float* w = w_ + base;
    for (int64_t i = 0; i < count; ++i) {
        if (!is_outlier(w[i])) continue;
        const uint32_t at = static_cast<uint32_t>(i);
        std::memcpy(index, &at, 4);
        std::memcpy(value, w + i, 4);
        index += 4, value += 4;
    }
    p = value;
    // 8 indices fill exactly `bits` bytes, LSB first (little-endian store of the accumulator).
    const uint8_t* codes = codes_.get() + base;
    int64_t i = 0;
    for (; i + 8 <= count; i += 8, p += bits) {
        uint64_t acc = 0;
        for (int j = 0; j < 8; ++j) acc |= static_cast<uint64_t>(codes[i + j]) << (j * bits);
        std::memcpy(p, &acc, static_cast<size_t>(bits));
    }
    if (i < count) {
        uint64_t acc = 0;
        for (int j = 0; i + j < count; ++j) acc |= static_cast<uint64_t>(codes[i + j]) << (j * bits);
        const size_t tail = static_cast<size_t>(((count - i) * bits + 7) / 8);
        std::memcpy(p, &acc, tail);
        p += tail;
    }
    while ((p - blob) % 4 != 0) *p++ = 0;
}

}  // namespace flexpipe
