// SPDX-License-Identifier: Apache-2.0
// LayerQuantizer: Gaussian fit, outliers, rank clusters and FPQ1 blob writing (see quantize.h).
#include "runtime/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>

#include "runtime/parallel.h"
#include "runtime/quant_blob.h"

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

// Sorts a[0..m) (b is scratch of m keys): 2^j parts (<= threads) sorted in parallel, then merged pairwise
// between a and b. Returns the buffer holding the result. Keys are distinct, so the order is unique.
uint64_t* sort_keys(uint64_t* a, uint64_t* b, int64_t m, int threads) {
    int parts = 1;
    while (parts * 2 <= threads && parts < 16 && m / (parts * 2) >= 4096) parts *= 2;
    auto bound = [&](int64_t p) { return m * p / parts; };
    parallel_for(parts, threads, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) std::sort(a + bound(p), a + bound(p + 1));
    });
    for (int width = 1; width < parts; width *= 2) {
        parallel_for(parts / (2 * width), threads, [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                const int64_t lo = bound(2 * q * width), mid = bound((2 * q + 1) * width);
                const int64_t hi = bound((2 * q + 2) * width);
                std::merge(a + lo, a + mid, a + mid, a + hi, b + lo);
            }
        });
        std::swap(a, b);
    }
    return a;
}

}  // namespace

Status LayerQuantizer::fit(const float* w, int64_t n, const QuantizeOptions& options) {
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

Status LayerQuantizer::fit_gaussian() {
    const int64_t chunks = (n_ + chunk - 1) / chunk;
    auto part = try_alloc<double>(chunks);
    if (!part) return out_of_memory("partial sums", chunks);
    const float* w = w_;
    const int64_t n = n_;
    // A sum of finite floats stays finite in double (n < 2^32), so a non-finite chunk sum finds them.
    parallel_for(chunks, options_.threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0.0;
            for (int64_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i) s += w[i];
            part[c] = s;
        }
    });
    double sum = 0.0;
    for (int64_t c = 0; c < chunks; ++c) {
        if (std::isfinite(part[c])) {
            sum += part[c];
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

Status LayerQuantizer::cluster() {
    const int64_t n = n_, chunks = (n + chunk - 1) / chunk;
    const int threads = options_.threads;
    auto offset = try_alloc<int64_t>(chunks + 1);
    codes_ = try_alloc<uint8_t>(n);
    shard_outliers_ = try_alloc<int64_t>(options_.shards);
    if (!offset || !codes_ || !shard_outliers_) return out_of_memory("cluster indices", n);
    // Non-outliers per chunk, then their keys at the chunk's prefix offset (positions ascending).
    parallel_for(chunks, threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            int64_t kept = 0;
            for (int64_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i) kept += !is_outlier(w_[i]);
            offset[c + 1] = kept;
        }
    });
    offset[0] = 0;
    for (int64_t c = 0; c < chunks; ++c) offset[c + 1] += offset[c];
    const int64_t m = offset[chunks];
    outliers_ = n - m;
    auto keys = try_alloc<uint64_t>(m);
    auto scratch = try_alloc<uint64_t>(m);
    if (!keys || !scratch) return out_of_memory("sort keys", m);
    parallel_for(chunks, threads, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            uint64_t* k = keys.get() + offset[c];
            for (int64_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i) {
                if (is_outlier(w_[i])) {
                    codes_[i] = 0;
                } else {
                    *k++ = (static_cast<uint64_t>(order_key(w_[i])) << 32) | static_cast<uint64_t>(i);
                }
            }
        }
    });
    const uint64_t* sorted = sort_keys(keys.get(), scratch.get(), m, threads);
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

uint64_t LayerQuantizer::shard_bytes(int s) const {
    return quant_blob_bytes(static_cast<uint64_t>(shard_weights()), options_.bits,
                            static_cast<uint64_t>(shard_outliers_[s]));
}

void LayerQuantizer::write_blobs(uint8_t* const* blobs) const {
    parallel_for(options_.shards, options_.threads, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) write_blob(static_cast<int>(s), blobs[s]);
    });
}

void LayerQuantizer::write_blob(int s, uint8_t* blob) const {
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
