// SPDX-License-Identifier: Apache-2.0
// Arena allocation: one aligned block, grown or shrunk only between runs.
#include "alloc/arena.h"

#include <cstdlib>
#include <cstring>

#include "common/align.h"

namespace flexpipe {

Arena::~Arena() { release(); }

void Arena::release() {
    std::free(base_);
    base_ = nullptr;
    size_ = 0;
}

Status Arena::resize(size_t bytes, size_t keep) {
    if (bytes == size_ && base_ != nullptr) return Status::ok();
    const size_t alloc = align_up(bytes + overread_bytes, io_alignment);
    void* p = std::aligned_alloc(io_alignment, alloc);
    if (p == nullptr) {
        return Status::error(StatusCode::out_of_memory, "failed to allocate arena: %zu bytes are not available",
                             alloc);
    }
    const size_t copy = keep < size_ ? keep : size_;
    if (base_ != nullptr && copy > 0) std::memcpy(p, base_, copy < bytes ? copy : bytes);
    // Touch nothing else: pages of the activation region are mapped on first use, so the
    // measured RSS reflects what runs actually use.
    std::free(base_);
    base_ = static_cast<uint8_t*>(p);
    size_ = bytes;
    if (bytes > high_water_) high_water_ = bytes;
    return Status::ok();
}

}  // namespace flexpipe
