// SPDX-License-Identifier: Apache-2.0
// run_write_batch: the jobs cut into items, largest first, spread over the threads.
#include "runtime/write_batch.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "common/dtype.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

struct Item {
    size_t job = 0;
    int64_t part = 0;   // copy: chunk index; transform: part index
    int64_t parts = 1;  // transform parts (1: whole)
    size_t cost = 0;    // bytes it writes (for the order)
};

// Parts for a transform of `bytes` output: about one per copy chunk, at most 4 per thread.
int64_t transform_parts(const WriteJob& j, int threads) {
    if (j.prepack->run_part == nullptr || threads <= 1) return 1;
    const auto by_size = static_cast<int64_t>(j.bytes / copy_chunk_bytes);
    return std::max<int64_t>(1, std::min<int64_t>(by_size, int64_t{4} * threads));
}

// The items, largest first, dealt so that each thread's share (runtime/parallel.h) starts with
// one of the largest.
std::vector<Item> make_items(const std::vector<WriteJob>& jobs, int threads) {
    std::vector<Item> items;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const WriteJob& j = jobs[i];
        if (j.bytes == 0) continue;
        if (j.prepack == nullptr) {
            const auto chunks = static_cast<int64_t>((j.bytes + copy_chunk_bytes - 1) / copy_chunk_bytes);
            for (int64_t c = 0; c < chunks; ++c) {
                const size_t begin = static_cast<size_t>(c) * copy_chunk_bytes;
                items.push_back({i, c, 1, std::min(copy_chunk_bytes, j.bytes - begin)});
            }
            continue;
        }
        const int64_t parts = transform_parts(j, threads);
        for (int64_t p = 0; p < parts; ++p) items.push_back({i, p, parts, j.bytes / static_cast<size_t>(parts)});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.cost > b.cost; });
    const size_t t = static_cast<size_t>(std::max(threads, 1));
    if (t == 1 || items.size() <= t) return items;
    // Share s of parallel_items is the contiguous range [n s / t, n (s + 1) / t): put sorted item
    // k t + s at the k-th place of share s.
    std::vector<Item> dealt(items.size());
    const size_t n = items.size();
    std::vector<size_t> fill(t);
    for (size_t s = 0; s < t; ++s) fill[s] = n * s / t;
    for (size_t k = 0; k < n; ++k) {
        size_t s = k % t;
        while (fill[s] >= n * (s + 1) / t) s = (s + 1) % t;  // a share that is full passes the item on
        dealt[fill[s]++] = items[k];
    }
    return dealt;
}

bool aligned_for(const void* p, DType dtype) {
    return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(dtype_size(dtype)) == 0;
}

uint8_t* align64(std::vector<uint8_t>& buffer, size_t bytes) {
    if (buffer.size() < bytes + 64) buffer.resize(bytes + 64);
    return buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
}

}  // namespace

Status run_write_batch(std::vector<WriteJob>& jobs, int threads) {
    const int t = std::max(1, std::min(threads, max_parallel_threads));
    // A transform packed in parts by several threads reads one aligned copy of its weight, made first
    // (in chunks, by all threads).
    std::vector<std::vector<uint8_t>> aligned_weights;
    std::vector<WriteJob> copies;
    for (WriteJob& j : jobs) {
        if (j.prepack == nullptr || transform_parts(j, t) == 1 || aligned_for(j.weight.data, j.weight.dtype)) continue;
        const size_t bytes = static_cast<size_t>(j.weight.numel) * dtype_size(j.weight.dtype);
        aligned_weights.emplace_back();
        uint8_t* to = align64(aligned_weights.back(), bytes);
        WriteJob copy;
        copy.dst = to;
        copy.src = j.src;
        copy.bytes = bytes;
        copies.push_back(copy);
        j.weight.data = to;
    }
    if (!copies.empty()) FLEXPIPE_RETURN_IF_ERROR(run_write_batch(copies, t));
    const std::vector<Item> items = make_items(jobs, t);
    std::vector<std::vector<uint8_t>> scratch(static_cast<size_t>(t));
    std::mutex failed_mutex;
    Status failed;
    parallel_items(static_cast<int64_t>(items.size()), t, [&](int64_t k, int slot) {
        const Item& it = items[static_cast<size_t>(k)];
        WriteJob& j = jobs[it.job];
        if (j.prepack == nullptr) {
            const size_t begin = static_cast<size_t>(it.part) * copy_chunk_bytes;
            std::memcpy(j.dst + begin, j.src + begin, it.cost);
            return;
        }
        TensorView w = j.weight;
        if (!aligned_for(w.data, w.dtype)) {
            const size_t bytes = static_cast<size_t>(w.numel) * dtype_size(w.dtype);
            uint8_t* aligned = align64(scratch[static_cast<size_t>(slot)], bytes);
            std::memcpy(aligned, j.src, bytes);
            w.data = aligned;
        }
        const auto n_ints = static_cast<int32_t>(j.ints.size());
        const Status st = it.parts == 1 ? j.prepack->run(w, j.ints.data(), n_ints, j.out)
                                        : j.prepack->run_part(w, j.ints.data(), n_ints, it.part, it.parts, j.out);
        if (!st.is_ok()) {
            std::lock_guard<std::mutex> lock(failed_mutex);
            if (failed.is_ok()) failed = st;
        }
    });
    return failed;
}

}  // namespace flexpipe
