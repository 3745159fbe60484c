// SPDX-License-Identifier: Apache-2.0
// Alignment constants and helpers shared by the arena, the IO layer and the kernels.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexpipe {

constexpr size_t arena_alignment = 64;   // every planned slice starts on a cache line
constexpr size_t overread_bytes = 64;    // SIMD variants may read this far past a buffer (FLEXPIPE_OVERREAD)
constexpr size_t io_alignment = 4096;    // O_DIRECT reads: offsets, sizes and buffers on 4 KiB

constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// p moved up to the next multiple of a, e.g. a kernel's workspace to a cache line (arena_alignment).
inline char* align_ptr(void* p, size_t a) {
    return reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(p), a));
}

}  // namespace flexpipe
