// SPDX-License-Identifier: Apache-2.0
// Session: the native half of an engine — one arena, its decoded programs, and a file reader.
//
// The TypeScript runtime drives it: resize the arena, write constants or read file ranges into
// it, register programs, then run them (whole, or as op ranges [op_begin, op_end)).
//
// Lanes: the addon lets one run (the compute lane) and one read_file (the load lane) be in flight at
// once, and refuses every other method until both are idle. What each lane touches:
//   compute: programs_ (bind writes its slots), threads_, arena bytes at the program's offsets;
//   load:    reader_, arena bytes at the caller's destination ranges, the atomic read counters.
// Both read arena_.base()/size(), which only resize() changes and resize needs both lanes idle.
// The TypeScript planner keeps the two lanes' arena ranges disjoint; the native side guarantees
// only that its own state is race-free. Neither run() nor read_file() allocates.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloc/arena.h"
#include "common/status.h"
#include "io/reader.h"
#include "runtime/program.h"

namespace flexpipe {

struct FileRange {
    uint64_t file_offset = 0;
    uint64_t length = 0;
    uint64_t arena_offset = 0;
};

struct ReadOptions {
    bool direct = false;    // try O_DIRECT (falls back to buffered when refused or unaligned)
    double bandwidth = 0;   // bytes per second to emulate (0: unthrottled)
    ReadGeometry geometry;  // chunk size and queue depth (io/reader.h)
};

struct ReadResult {
    bool direct = false;  // O_DIRECT was really used
    uint64_t bytes = 0;
    double ms = 0;        // wall time, throttle sleep included
};

class Session {
  public:
    Session(int threads, const std::string& io_preference);

    Status resize(uint64_t bytes, uint64_t keep) { return arena_.resize(bytes, keep); }
    Status write(uint64_t offset, const uint8_t* src, size_t bytes);
    Status read(uint64_t offset, uint8_t* dst, size_t bytes) const;
    // The arena's bytes [offset, offset + bytes) in *dst; an error unless they lie inside it. Valid until the
    // next resize.
    Status arena_span(uint64_t offset, size_t bytes, uint8_t** dst);

    // Decodes a program; returns its id in *id.
    Status add_program(const double* words, size_t n, int32_t* id);
    Status remove_program(int32_t id);
    // Copies inputs in, runs ops [op_begin, op_end), copies outputs out (outputs[k] also backs the
    // tensors of region 2 + k, which the ops write in place: those are not copied). Buffers were checked by
    // check_io(), the range by check_range(). op_ms, when given, receives each op's wall time
    // (op_end - op_begin entries).
    // With a gate, op k waits in gate->before(k) (a pipelined run, runtime/pipeline_gate.h).
    Status run(int32_t id, uint64_t activation_base, const HostBuffer* inputs, size_t n_in,
               const HostBuffer* outputs, size_t n_out, size_t op_begin, size_t op_end, double* op_ms = nullptr,
               OpGate* gate = nullptr);
    // Ops of program id (0 when there is no such program).
    size_t op_count(int32_t id) const;
    // Checks 0 <= op_begin <= op_end <= op_count(id) (ids are checked by check_io).
    Status check_range(int32_t id, int64_t op_begin, int64_t op_end) const;
    // Validates program id and host buffers (tensor ids, byte sizes) before a run is queued.
    Status check_io(int32_t id, const HostBuffer* buffers, size_t n) const;

    // Reads ranges of path into the arena (session_read.cc). scratch has room for n requests (the
    // caller sizes it beforehand, so the read allocates nothing). With a gate, range i waits for it
    // (io/reader.h) and the gate applies options.bandwidth per range instead of to the whole call.
    Status read_file(const std::string& path, const FileRange* ranges, size_t n, const ReadOptions& options,
                     ReadRequest* scratch, ReadResult* result, ReadGate* gate = nullptr);
    uint64_t bytes_read() const { return bytes_read_.load(); }
    uint64_t direct_reads() const { return direct_reads_.load(); }

    const Arena& arena() const { return arena_; }
    const char* reader_name() const { return reader_->name(); }
    const std::string& reader_note() const { return reader_note_; }
    int threads() const { return threads_; }
    void set_threads(int threads) { threads_ = threads; }

  private:
    Arena arena_;
    std::vector<std::unique_ptr<Program>> programs_;
    // The last removed program, whose vectors the next add_program decodes into: an engine that
    // replaces the programs of its shapes (an LRU of them) reuses their memory instead of faulting in
    // fresh pages for each (first touch was half the cost of a new shape's program).
    std::unique_ptr<Program> spare_;
    std::unique_ptr<FileReader> reader_;
    std::string reader_note_;
    int threads_;
    std::atomic<uint64_t> bytes_read_{0};    // cumulative, over successful reads
    std::atomic<uint64_t> direct_reads_{0};  // successful reads that used O_DIRECT
};

}  // namespace flexpipe
