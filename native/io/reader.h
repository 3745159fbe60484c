// SPDX-License-Identifier: Apache-2.0
// FileReader: reads byte ranges of a file into memory, through io_uring (liburing) when the build
// has it and the kernel allows it, or through a pool of pread threads everywhere else.
//
// A read is a batch of requests; the reader splits them into chunks of at most chunk_bytes, keeps
// several in flight, resubmits short reads, and fails with Status::io naming the errno on error or
// on an unexpected end of file. Readers hold no state between calls except their ring or pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace flexpipe {

struct ReadRequest {
    uint64_t file_offset = 0;
    uint64_t length = 0;
    uint8_t* dst = nullptr;
};

class FileReader {
  public:
    virtual ~FileReader() = default;
    // Reads every request fully from fd; returns io with the errno name on failure.
    virtual Status read(int fd, const ReadRequest* requests, size_t n) = 0;
    virtual const char* name() const = 0;
};

constexpr uint64_t reader_chunk_bytes = 1u << 20;
constexpr int reader_queue_depth = 16;

std::unique_ptr<FileReader> make_pread_reader(int threads);
// Returns nullptr (and why in *why) when io_uring is unavailable (not built in, ENOSYS, EPERM).
std::unique_ptr<FileReader> make_uring_reader(std::string* why);

// preference: "auto" (io_uring if it works, else pread), "uring" or "pread"; *note says what was
// chosen and why, for binding.info().
std::unique_ptr<FileReader> make_file_reader(const std::string& preference, std::string* note);

}  // namespace flexpipe
