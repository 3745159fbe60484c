// SPDX-License-Identifier: Apache-2.0
// Resident data into the arena, all of a plan at once and on the session's threads: plain copies
// and plan-time weight transforms (runtime/prepack.h) that write their result straight into the arena.
//
// Why: a model's first inference used to transform each weight into a fresh JS array, one after the
// other on the JS thread, and then copy that array into the arena. Every byte was written twice into
// memory touched for the first time (a page fault per 4 KiB), on one core. Here each weight is read
// once from where it lies (the model file's mapping, addon/map_file.h) and written once, to its
// place in the arena; the work is spread over the threads: first the destination pages are mapped
// (one madvise per chunk instead of a fault per page), then copies in chunks of copy_chunk_bytes,
// transforms one per item, or in parts when the transform can split (PrepackEntry::run_part).
//
// A transform's weight must be aligned to its element size; a weight that is not (raw bytes inside a
// protobuf) is first copied into scratch of the thread's own (kept for its next item). Not on the
// inference path: it allocates that scratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "runtime/prepack.h"
#include "runtime/tensor_view.h"

namespace flexpipe {

struct WriteJob {
    uint8_t* dst = nullptr;          // in the arena (the caller checked [dst, dst + bytes) lies in it)
    size_t bytes = 0;                // bytes written at dst
    const uint8_t* src = nullptr;    // a copy's source (bytes long), or the transform's weight bytes
    const PrepackEntry* prepack = nullptr;  // nullptr: a copy
    TensorView weight;               // the transform's weight (data: src, possibly unaligned)
    std::vector<int64_t> ints;       // the transform's ints
    TensorView out;                  // the transform's result shape (data: dst)
};

constexpr size_t copy_chunk_bytes = size_t{4} << 20;

// Runs every job on up to `threads` threads; returns the first failure (the other jobs still run).
Status run_write_batch(std::vector<WriteJob>& jobs, int threads);

}  // namespace flexpipe
