// SPDX-License-Identifier: Apache-2.0
// FileReader: reads byte ranges of a file into memory, through io_uring (liburing) when the build
// has it and the kernel allows it, or through a pool of pread threads everywhere else.
//
// A read is a batch of requests; the reader splits them into chunks of at most chunk_bytes, keeps
// queue_depth of them in flight (the caller's ReadGeometry), resubmits short reads, and fails with
// Status::io naming the errno on error or on an unexpected end of file. Readers hold no state between calls except their ring, and a read
// allocates nothing (chunks come from ChunkCursor, in-flight state lives on the stack).
//
// O_DIRECT: the caller opens fd with O_DIRECT only when every request's file offset, length and
// dst are multiples of 4096; chunk_bytes is a multiple of 4096, so every chunk stays aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace flexpipe {

// How a read walks the disk: chunks of at most chunk_bytes, queue_depth of them in flight (io_uring)
// or read by queue_depth pread threads (at most 16). Devices may differ in what streams fastest;
// `npm run bench:io` measures a device. Default 256 KiB x 8 (on the development VM's virtio disk every
// geometry from 128 KiB x 16 to 4 MiB x 2 read within 4% of it).
struct ReadGeometry {
    static constexpr uint64_t min_chunk_bytes = 4096;
    static constexpr uint64_t max_chunk_bytes = 64u << 20;
    static constexpr int max_queue_depth = 64;

    uint64_t chunk_bytes = 256u << 10;
    int queue_depth = 8;

    // chunk_bytes a multiple of 4096 (so O_DIRECT chunks stay aligned) within the limits above, and
    // 1 <= queue_depth <= max_queue_depth.
    bool valid() const {
        return chunk_bytes >= min_chunk_bytes && chunk_bytes <= max_chunk_bytes && chunk_bytes % 4096 == 0 &&
               queue_depth >= 1 && queue_depth <= max_queue_depth;
    }
};

struct ReadRequest {
    uint64_t file_offset = 0;
    uint64_t length = 0;
    uint8_t* dst = nullptr;
};

// ReadGate: what a pipelined read (runtime/pipeline_gate.h) tells the reader and hears from it.
// Requests start in order: the reader asks ready(i) before the first chunk of request i and submits
// nothing further while it is false; with nothing else in flight it blocks in wait_ready(i). It
// reports every chunk it finishes with read_bytes (from any reader thread, in any order).
class ReadGate {
  public:
    virtual ~ReadGate() = default;
    // Whether request i may start now (never blocks).
    virtual bool ready(size_t i) = 0;
    // Blocks until request i may start; false when the pipeline stopped (read nothing more).
    virtual bool wait_ready(size_t i) = 0;
    // bytes more of request i are in memory.
    virtual void read_bytes(size_t i, uint64_t bytes) = 0;
};

class FileReader {
  public:
    virtual ~FileReader() = default;
    // Reads every request fully from fd; returns io with the errno name on failure. With a gate,
    // requests wait for it (see ReadGate) and a stopped gate ends the read with Status::cancelled.
    // geometry must pass ReadGeometry::valid().
    virtual Status read(int fd, const ReadRequest* requests, size_t n, const ReadGeometry& geometry,
                        ReadGate* gate = nullptr) = 0;
    virtual const char* name() const = 0;
};

// Walks the requests as chunks of at most chunk_bytes, in order, without a list.
class ChunkCursor {
  public:
    ChunkCursor(const ReadRequest* requests, size_t n, uint64_t chunk_bytes)
        : requests_(requests), n_(n), chunk_bytes_(chunk_bytes) {}
    // The next chunk as a request of its own; false when none is left. *request: whose chunk it is.
    bool next(ReadRequest* chunk, size_t* request = nullptr) {
        if (!skip_empty()) return false;
        const ReadRequest& r = requests_[request_];
        const uint64_t len = r.length - offset_ < chunk_bytes_ ? r.length - offset_ : chunk_bytes_;
        *chunk = {r.file_offset + offset_, len, r.dst + offset_};
        if (request) *request = request_;
        offset_ += len;
        return true;
    }
    // Whether a chunk is left; if so, *request is whose it is and *first whether it starts that
    // request (the point where a gated read asks ReadGate::ready).
    bool peek(size_t* request, bool* first) {
        if (!skip_empty()) return false;
        *request = request_;
        *first = offset_ == 0;
        return true;
    }
    // Chunks in total (for sizing a thread pool).
    static uint64_t count(const ReadRequest* requests, size_t n, uint64_t chunk_bytes) {
        uint64_t c = 0;
        for (size_t i = 0; i < n; ++i) c += (requests[i].length + chunk_bytes - 1) / chunk_bytes;
        return c;
    }

  private:
    // Moves past finished and empty requests; false when none is left.
    bool skip_empty() {
        while (request_ < n_ && offset_ >= requests_[request_].length) ++request_, offset_ = 0;
        return request_ < n_;
    }

    const ReadRequest* requests_;
    size_t n_;
    uint64_t chunk_bytes_;
    size_t request_ = 0;
    uint64_t offset_ = 0;
};

std::unique_ptr<FileReader> make_pread_reader();
// Returns nullptr (and why in *why) when io_uring is unavailable (not built in, ENOSYS, EPERM).
std::unique_ptr<FileReader> make_uring_reader(std::string* why);

// preference: "auto" (io_uring if it works, else pread), "uring" or "pread"; *note says what was
// chosen and why, for binding.info().
std::unique_ptr<FileReader> make_file_reader(const std::string& preference, std::string* note);

}  // namespace flexpipe
