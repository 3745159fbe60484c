// SPDX-License-Identifier: Apache-2.0
// RunWorker: runs one program off the event loop; pins its session and the caller's arrays.
#pragma once

#include <napi.h>

#include <vector>

#include "addon/workers/status_worker.h"
#include "runtime/compute_lane.h"
#include "runtime/session.h"

namespace flexpipe {

class RunWorker final : public StatusWorker {
  public:
    // With several threads the run executes on `lane` (the session's one compute thread) while this
    // worker's pool thread waits; with one thread it runs on the pool thread.
    RunWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, ComputeLane* lane, int32_t program,
              uint64_t activation_base)
        : StatusWorker(env, busy), session_(session), lane_(lane), program_(program), activation_base_(activation_base) {}

    // Reads [tensorId, TypedArray] pairs, keeps references to the arrays, and validates sizes.
    void collect(const Napi::Value& owner, const Napi::Value& inputs, const Napi::Value& outputs);
    // opBegin / opEnd (undefined: 0 / the program's op count); throws a RangeError naming the
    // bounds unless 0 <= opBegin <= opEnd <= op count. Call after collect().
    void set_range(const Napi::Value& op_begin, const Napi::Value& op_end);
    // Records per-op times of the range (sized before the worker is queued, so the run itself
    // allocates nothing). Call after set_range().
    void enable_profile() {
        profile_ = true;
        op_ms_.assign(op_end_ - op_begin_, 0.0);
    }

  protected:
    // One thread: no OpenMP team to keep warm, so the pool thread runs the program itself and the
    // two thread wake-ups of the lane handoff are saved (about 40 us per run on a 2-vCPU VM:
    // node dist/bench/models/call-overhead.js).
    Status work() override {
        if (session_->threads() <= 1) return run_program();
        return lane_->run(&RunWorker::run_on_lane, this);
    }
    static Status run_on_lane(void* self) { return static_cast<RunWorker*>(self)->run_program(); }
    Status run_program() {
        return session_->run(program_, activation_base_, inputs_.data(), inputs_.size(), outputs_.data(),
                             outputs_.size(), op_begin_, op_end_, profile_ ? op_ms_.data() : nullptr);
    }
    // With profiling, resolves with a Float64Array of per-op milliseconds.
    Napi::Value result(Napi::Env env) override {
        if (!profile_) return env.Undefined();
        Napi::Float64Array times = Napi::Float64Array::New(env, op_ms_.size());
        for (size_t i = 0; i < op_ms_.size(); ++i) times[i] = op_ms_[i];
        return times;
    }

  private:
    void collect_list(const Napi::Value& list, const char* what, std::vector<HostBuffer>* out);

    Session* session_;
    ComputeLane* lane_;
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
