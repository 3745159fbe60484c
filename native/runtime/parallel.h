// SPDX-License-Identifier: Apache-2.0
// The only place that uses OpenMP: split an index range over threads.
//
// Kernels are single-threaded; ops and the runtime call parallel_for / parallel_items to spread
// independent work items (output channels, rows, batches, GEMM rectangles) over `threads` OpenMP
// threads. With threads <= 1 or a build without OpenMP the loop runs inline.
#pragma once

#include <atomic>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace flexpipe {

// Work is split into one contiguous share per thread, and a thread that finishes its share helps
// with the others' (taking their items from the same counters). With equally fast cores every
// thread does exactly its own share, so consecutive ops split the same way touch the same data on
// the same core: a depthwise convolution after a 1x1 one reads the channels its own core just wrote
// instead of a random half of them from the other core's cache. On a machine where one core is slower (a busy SMT sibling, a vCPU the host
// preempts) the others still take over its remaining items instead of waiting for them.
constexpr int64_t chunks_per_thread = 4;
constexpr int max_parallel_threads = 64;

// Calls fn(i, slot) once for every item i in [0, n), on up to `threads` OpenMP threads: thread s
// takes items in order from its share [n s / t, n (s + 1) / t), then from the other shares. slot in
// [0, threads) names the calling thread: calls with the same slot never overlap, so per-slot scratch
// needs no locking.
template <typename Fn>
void parallel_items(int64_t n, int threads, Fn&& fn) {
    if (n <= 0) return;
#ifdef _OPENMP
    if (threads > 1 && n > 1) {
        int t = static_cast<int>(threads < n ? threads : n);
        if (t > max_parallel_threads) t = max_parallel_threads;
        struct alignas(64) Share {
            std::atomic<int64_t> next;
            int64_t end;
        };
        Share shares[max_parallel_threads];
        for (int s = 0; s < t; ++s) {
            shares[s].next.store(n * s / t, std::memory_order_relaxed);
            shares[s].end = n * (s + 1) / t;
        }
#pragma omp parallel num_threads(t)
        {
            const int slot = omp_get_thread_num();
            for (int k = 0; k < t; ++k) {
                Share& share = shares[(slot + k) % t];
                for (int64_t i = share.next.fetch_add(1, std::memory_order_relaxed); i < share.end;
                     i = share.next.fetch_add(1, std::memory_order_relaxed))
                    fn(i, slot);
            }
        }
        return;
    }
#else
    (void)threads;
#endif
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
}

// Calls fn(begin, end) on disjoint contiguous chunks covering [0, n): chunks_per_thread chunks per
// thread (fewer when n is small), taken from a shared counter by up to `threads` threads. With
// threads <= 1 or a build without OpenMP it is one inline call fn(0, n).
template <typename Fn>
void parallel_for(int64_t n, int threads, Fn&& fn) {
    if (n <= 0) return;
    if (threads > 1 && n > 1) {
        const int64_t want = static_cast<int64_t>(threads) * chunks_per_thread;
        const int64_t chunks = want < n ? want : n;
        parallel_items(chunks, threads, [&](int64_t c, int) { fn(n * c / chunks, n * (c + 1) / chunks); });
        return;
    }
    fn(int64_t{0}, n);
}

inline int max_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

inline bool openmp_enabled() {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

}  // namespace flexpipe
