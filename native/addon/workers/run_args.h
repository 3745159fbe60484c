// SPDX-License-Identifier: Apache-2.0
// RunArgs: what one run of a program needs from JS (program, host buffers, op range, profiling),
// collected and checked on the JS thread so that the run itself allocates nothing.
#pragma once

#include <napi.h>

#include <vector>

#include "runtime/session.h"

namespace flexpipe {

class RunArgs {
  public:
    RunArgs(Session* session, int32_t program, uint64_t activation_base)
        : session_(session), program_(program), activation_base_(activation_base) {}

    // Reads [tensorId, TypedArray] pairs, keeps references to the arrays (and to owner, the session
    // object), and validates tensor ids and sizes.
    void collect(const Napi::Value& owner, const Napi::Value& inputs, const Napi::Value& outputs);
    // opBegin / opEnd (undefined: 0 / the program's op count); throws a RangeError naming the
    // bounds unless 0 <= opBegin <= opEnd <= op count. Call after collect().
    void set_range(const Napi::Value& op_begin, const Napi::Value& op_end);
    // profile: undefined or a boolean; true records per-op times of the range (sized here, so the
    // run allocates nothing). Call after set_range().
    void set_profile(const Napi::Value& profile);

    size_t op_begin() const { return op_begin_; }
    size_t op_end() const { return op_end_; }
    size_t op_count() const { return session_->op_count(program_); }
    bool profile() const { return profile_; }
    Session* session() const { return session_; }

    // Runs the range on the calling thread (gate: a pipelined run's waits, runtime/pipeline_gate.h).
    Status execute(OpGate* gate = nullptr) {
        return session_->run(program_, activation_base_, inputs_.data(), inputs_.size(), outputs_.data(),
                             outputs_.size(), op_begin_, op_end_, profile_ ? op_ms_.data() : nullptr, gate);
    }
    // The per-op milliseconds as a Float64Array, or undefined without profiling.
    Napi::Value op_times(Napi::Env env) const;

  private:
    void collect_list(const Napi::Value& list, const char* what, std::vector<HostBuffer>* out);

    Session* session_;
    int32_t program_;
    uint64_t activation_base_;
    size_t op_begin_ = 0, op_end_ = 0;
    std::vector<HostBuffer> inputs_;
    std::vector<HostBuffer> outputs_;
    std::vector<Napi::ObjectReference> pins_;
    bool profile_ = false;
    std::vector<double> op_ms_;
};

}  // namespace flexpipe
