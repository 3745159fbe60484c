// SPDX-License-Identifier: Apache-2.0
// Program: a planned sequence of operator calls on arena offsets, decoded from the compact
// descriptor the TypeScript planner builds (lib/runtime/program-encoder.ts).
//
// Descriptor layout (a Float64Array; every value is an exact integer except float attributes):
//   header   [version = 1, n_tensors, n_ops]
//   tensor   [region, offset, dtype, rank, d0 .. d7]            12 words each
//            region 0 = persistent (offset from the arena start),
//            region 1 = activations (offset from the activation base given at run time),
//            region 2 + k = the run's output buffer k (offset from its start): a graph output the ops
//            write straight into the caller's array, so it takes no arena bytes and no copy
//   op       [op_code, n_in, n_out, n_ints, n_floats,
//             in_ids[n_in] (-1 = absent), out_ids[n_out], ints[n_ints], floats[n_floats]]
// decode() checks every field (codes, dtypes, ranks, dims, ids, counts) and the total size;
// bind() checks every tensor against the arena before a run (inside it, aligned to its element size, and
// no op's tensors overlapping in part); run() skips an op whose outputs are all empty. Decoding
// allocates (unless into a removed program's storage, session.h); running does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloc/arena.h"
#include "common/status.h"
#include "runtime/op_call.h"
#include "runtime/op_registry.h"

namespace flexpipe {

// A caller's buffer for a program tensor (a run's input copied in, or output copied out or written in place).
struct HostBuffer {
    int32_t tensor = 0;  // program tensor id
    uint8_t* data = nullptr;
    size_t bytes = 0;
};

constexpr int32_t first_host_region = 2;      // region of output buffer 0
constexpr int32_t max_host_regions = 1 << 16;  // output buffers a program may write in place

struct TensorSlot {
    int32_t region = 0;
    uint64_t offset = 0;
    uint64_t bytes = 0;
    TensorView view;  // data is filled by bind()
};

struct OpRecord {
    int32_t code = 0;
    int32_t views_begin = 0;  // n_in input views then n_out output views in Program::op_views_
    int32_t n_in = 0;
    int32_t n_out = 0;
    int32_t ints_begin = 0;
    int32_t n_ints = 0;
    int32_t floats_begin = 0;
    int32_t n_floats = 0;
};

// OpGate: what a pipelined run (runtime/pipeline_gate.h) tells the compute side and hears from it.
class OpGate {
  public:
    virtual ~OpGate() = default;
    // Blocks until op k may run (the weights it reads are in); an error ends the run.
    virtual Status before(size_t op) = 0;
    // Op k is done (its inputs' memory may be reused by loads).
    virtual void after(size_t op) = 0;
};

class Program {
  public:
    // Decodes into *out, reusing its vectors' capacity; on failure *out holds no usable program.
    static Status decode(const double* words, size_t n_words, Program* out);

    // Points every tensor into the arena, or into outputs[k] for region 2 + k; fails if any lies
    // outside its region or names an output buffer the run was not given.
    Status bind(const Arena& arena, uint64_t activation_base, const HostBuffer* outputs = nullptr, size_t n_out = 0);
    // Runs ops [op_begin, op_end) in order on the bound tensors (the caller checked the range); with
    // op_ms (op_end - op_begin entries), records each op's wall time in milliseconds (a gate's wait
    // not included); with a gate, waits in gate->before(k) before op k and reports gate->after(k).
    Status run(int threads, size_t op_begin, size_t op_end, double* op_ms = nullptr, OpGate* gate = nullptr) const;

    size_t tensor_count() const { return slots_.size(); }
    const TensorSlot& slot(size_t i) const { return slots_[i]; }
    size_t op_count() const { return ops_.size(); }
    // Bytes the program needs past the activation base (its activation footprint).
    uint64_t activation_bytes() const { return activation_bytes_; }
    uint64_t persistent_bytes() const { return persistent_bytes_; }

  private:
    void clear();  // empties every vector, keeping its capacity
    Status check_overlaps() const;  // after bind: no op's tensors partially overlap

    std::vector<TensorSlot> slots_;
    std::vector<OpRecord> ops_;
    std::vector<int32_t> op_tensor_ids_;  // parallel to op_views_
    std::vector<TensorView> op_views_;
    std::vector<int64_t> ints_;
    std::vector<double> floats_;
    uint64_t activation_bytes_ = 0;
    uint64_t persistent_bytes_ = 0;
};

}  // namespace flexpipe
