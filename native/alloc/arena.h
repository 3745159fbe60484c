// SPDX-License-Identifier: Apache-2.0
// Arena: the one block of memory an engine computes in.
//
// How it works: the TypeScript planner assigns every tensor a byte offset in one of two regions
// of the arena — the persistent region [0, persistent) holding weights and plan constants, and
// the activation region [persistent, persistent + activations) reused by every run — and encodes
// the offsets into programs. The native side never decides where a tensor goes; it checks that
// every planned [offset, offset + bytes) lies inside the arena before it runs anything.
// Invariants: base is io_alignment (4 KiB) aligned, so planned offsets that are multiples of 4096
// are valid O_DIRECT destinations (readFile with direct); FLEXPIPE_OVERREAD
// bytes past the end are readable; resize() keeps the bytes of the persistent region (on Linux all
// of min(old, new) bytes: it is an mremap). Memory is allocated only by resize(), which the runtime
// calls between runs, never during one; pages are mapped on first use, so RSS shows what runs touch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/non_copyable.h"
#include "common/status.h"

namespace flexpipe {

class Arena : NonCopyable {
  public:
    Arena() = default;
    ~Arena();

    // Sets the size to `bytes`, preserving the first `keep` bytes. Allocation failure leaves the
    // arena as it was and returns out_of_memory.
    Status resize(size_t bytes, size_t keep);
    void release();

    uint8_t* base() const { return base_; }
    size_t size() const { return size_; }
    // Whether [offset, offset + bytes) lies inside the arena (overflow-safe).
    bool contains(uint64_t offset, uint64_t bytes) const {
        return offset <= size_ && bytes <= size_ - offset;
    }
    size_t high_water() const { return high_water_; }

  private:
    // The platform part of resize(): a block of `alloc` bytes holding the first `copy` bytes of the
    // current one (which it replaces), or nullptr with the current one untouched.
    uint8_t* regrow(size_t alloc, size_t copy);
    static void free_block(uint8_t* base, size_t mapped);

    uint8_t* base_ = nullptr;
    size_t size_ = 0;
    size_t mapped_ = 0;  // bytes of the mapping (size_ + overread, page-rounded)
    size_t high_water_ = 0;
};

}  // namespace flexpipe
