// SPDX-License-Identifier: Apache-2.0
// The only place that uses OpenMP: split an index range over threads.
//
// Kernels are single-threaded; ops and the runtime call parallel_for to spread independent
// work items (output channels, rows, batches) over `threads` OpenMP threads. With threads <= 1
// or a build without OpenMP the loop runs inline.
#pragma once

#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace flexpipe {

// Calls fn(begin, end) on disjoint chunks covering [0, n); chunks are contiguous and static.
template <typename Fn>
void parallel_for(int64_t n, int threads, Fn&& fn) {
    if (n <= 0) return;
#ifdef _OPENMP
    if (threads > 1 && n > 1) {
        const int t = static_cast<int>(threads < n ? threads : n);
#pragma omp parallel num_threads(t)
        {
            const int id = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            const int64_t begin = n * id / nt;
            const int64_t end = n * (id + 1) / nt;
            if (begin < end) fn(begin, end);
        }
        return;
    }
#else
    (void)threads;
#endif
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
