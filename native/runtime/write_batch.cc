// SPDX-License-Identifier: Apache-2.0
// run_write_batch: the jobs cut into items, largest first, spread over the threads.
#include "runtime/write_batch.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

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

// Maps every page the jobs write (MADV_POPULATE_WRITE, Linux 5.14+), in chunks, on the threads: one call
// per chunk instead of a page fault per 4 KiB. Where the kernel lacks it the writes fault as before.
void populate_destinations(const std::vector<WriteJob>& jobs, int threads) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    constexpr uintptr_t page = 4096;
    std::vector<std::pair<uint8_t*, size_t>> chunks;
    for (const WriteJob& j : jobs) {
        if (j.bytes == 0) continue;
        const uintptr_t begin = reinterpret_cast<uintptr_t>(j.dst) & ~(page - 1);
        const uintptr_t end = reinterpret_cast<uintptr_t>(j.dst) + j.bytes;
        for (uintptr_t c = begin; c < end; c += copy_chunk_bytes)
            chunks.emplace_back(reinterpret_cast<uint8_t*>(c), std::min<uintptr_t>(copy_chunk_bytes, end - c));
    }
    std::atomic<bool> unsupported{false};
    parallel_items(static_cast<int64_t>(chunks.size()), threads, [&](int64_t k, int) {
        if (unsupported.load(std::memory_order_relaxed)) return;
        const auto& c = chunks[static_cast<size_t>(k)];
        if (::madvise(c.first, c.second, MADV_POPULATE_WRITE) != 0) unsupported.store(true, std::memory_order_relaxed);
    });
#else
    (void)jobs;
    (void)threads;
#endif
}

// Scratch that grows and is not cleared (its bytes are overwritten before they are read): clearing a
// weight-sized buffer would touch every page once more.
class Scratch {
  public:
    // At least `bytes` bytes at a 64-byte-aligned address.
    uint8_t* aligned(size_t bytes) {
        if (size_ < bytes + 64) {
            memory_.reset(new uint8_t[bytes + 64]);
            size_ = bytes + 64;
        }
        return memory_.get() + (64 - reinterpret_cast<uintptr_t>(memory_.get()) % 64) % 64;
    }

  private:
    std::unique_ptr<uint8_t[]> memory_;
    size_t size_ = 0;
};

}  // namespace

Status run_write_batch(std::vector<WriteJob>& jobs, int threads) {
    const int t = std::max(1, std::min(threads, max_parallel_threads));
    // A transform packed in parts by several threads reads one aligned copy of its weight, made first
    // (in chunks, by all threads).
    std::vector<Scratch> aligned_weights(jobs.size());
    std::vector<WriteJob> copies;
    for (WriteJob& j : jobs) {
        if (j.prepack == nullptr || transform_parts(j, t) == 1 || aligned_for(j.weight.data, j.weight.dtype)) continue;
        const size_t bytes = static_cast<size_t>(j.weight.numel) * dtype_size(j.weight.dtype);
        uint8_t* to = aligned_weights[static_cast<size_t>(&j - jobs.data())].aligned(bytes);
        WriteJob copy;
        copy.dst = to;
        copy.src = j.src;
        copy.bytes = bytes;
        copies.push_back(copy);
        j.weight.data = to;
    }
    if (!copies.empty()) FLEXPIPE_RETURN_IF_ERROR(run_write_batch(copies, t));
    populate_destinations(jobs, t);
    const std::vector<Item> items = make_items(jobs, t);
    std::vector<Scratch> scratch(static_cast<size_t>(t));
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
            uint8_t* aligned = scratch[static_cast<size_t>(slot)].aligned(bytes);
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
