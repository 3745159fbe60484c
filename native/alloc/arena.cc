// SPDX-License-Identifier: Apache-2.0
// Arena allocation: one page-aligned mapping, grown or shrunk only between runs.
//
// On Linux the arena is an anonymous mapping resized with mremap: growing keeps the pages already
// there (no copy, no new page faults for them; the kernel may move the mapping but not the data),
// shrinking returns the tail to the system. A re-plan used to allocate a fresh block, copy the
// persistent region and fault every page of the new one in again on the next run; on this VM that
// was most of the 5-30 ms a re-plan added to the next inference. Elsewhere: aligned_alloc + copy.
#include "alloc/arena.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common/align.h"

namespace flexpipe {

Arena::~Arena() { release(); }

void Arena::release() {
    if (base_ != nullptr) free_block(base_, mapped_);
    base_ = nullptr;
    size_ = 0;
    mapped_ = 0;
}

Status Arena::resize(size_t bytes, size_t keep) {
    if (bytes == size_ && base_ != nullptr) return Status::ok();
    const size_t alloc = align_up(bytes + overread_bytes, io_alignment);
    uint8_t* p = regrow(alloc, std::min({keep, size_, bytes}));
    if (p == nullptr) {
        return Status::error(StatusCode::out_of_memory, "failed to allocate arena: %zu bytes are not available",
                             alloc);
    }
    base_ = p;
    mapped_ = alloc;
    size_ = bytes;
    if (bytes > high_water_) high_water_ = bytes;
    return Status::ok();
}

#if defined(__linux__)

// mremap keeps min(old, new) bytes, a superset of the first `copy`.
uint8_t* Arena::regrow(size_t alloc, size_t copy) {
    (void)copy;
    void* p = base_ == nullptr ? mmap(nullptr, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                               : mremap(base_, mapped_, alloc, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

void Arena::free_block(uint8_t* base, size_t mapped) { munmap(base, mapped); }

#else

// A fresh block with the first `copy` bytes; nothing else touched, so pages of the activation region
// are mapped on first use and the measured RSS reflects what runs actually use.
uint8_t* Arena::regrow(size_t alloc, size_t copy) {
    void* p = std::aligned_alloc(io_alignment, alloc);
    if (p == nullptr) return nullptr;
    if (base_ != nullptr && copy > 0) std::memcpy(p, base_, copy);
    std::free(base_);
    return static_cast<uint8_t*>(p);
}

void Arena::free_block(uint8_t* base, size_t mapped) {
    (void)mapped;
    std::free(base);
}

#endif

}  // namespace flexpipe
