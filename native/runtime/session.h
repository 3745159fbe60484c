// SPDX-License-Identifier: Apache-2.0
// Session: the native half of an engine — one arena, its decoded programs, and a file reader.
//
// The TypeScript runtime drives it: resize the arena, write constants or read file ranges into
// it, register programs, then run them. A session does one thing at a time (the addon enforces
// it); nothing here allocates during run() except what the program already owns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloc/arena.h"
#include "common/status.h"
#include "io/reader.h"
#include "runtime/program.h"

namespace flexpipe {

struct HostBuffer {
    int32_t tensor = 0;  // program tensor id
    uint8_t* data = nullptr;
    size_t bytes = 0;
};

struct FileRange {
    uint64_t file_offset = 0;
    uint64_t length = 0;
    uint64_t arena_offset = 0;
};

class Session {
  public:
    Session(int threads, const std::string& io_preference);

    Status resize(uint64_t bytes, uint64_t keep) { return arena_.resize(bytes, keep); }
    Status write(uint64_t offset, const uint8_t* src, size_t bytes);
    Status read(uint64_t offset, uint8_t* dst, size_t bytes) const;

    // Decodes a program; returns its id in *id.
    Status add_program(const double* words, size_t n, int32_t* id);
    Status remove_program(int32_t id);
    // Copies inputs in, runs, copies outputs out. Buffers were checked by check_io().
    // op_ms, when given, receives each op's wall time (op_count(id) entries).
    Status run(int32_t id, uint64_t activation_base, const HostBuffer* inputs, size_t n_in,
               const HostBuffer* outputs, size_t n_out, double* op_ms = nullptr);
    size_t op_count(int32_t id) const;
    // Validates program id and host buffers (tensor ids, byte sizes) before a run is queued.
    Status check_io(int32_t id, const HostBuffer* buffers, size_t n) const;

    Status read_file(const std::string& path, const FileRange* ranges, size_t n);

    const Arena& arena() const { return arena_; }
    const char* reader_name() const { return reader_->name(); }
    const std::string& reader_note() const { return reader_note_; }
    int threads() const { return threads_; }
    void set_threads(int threads) { threads_ = threads; }

  private:
    Arena arena_;
    std::vector<std::unique_ptr<Program>> programs_;
    std::unique_ptr<FileReader> reader_;
    std::string reader_note_;
    int threads_;
};

}  // namespace flexpipe
