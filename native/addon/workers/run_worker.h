// SPDX-License-Identifier: Apache-2.0
// RunWorker: runs one program (or an op range of it) off the event loop; pins its session and the
// caller's arrays (RunArgs).
#pragma once

#include <napi.h>

#include "addon/workers/run_args.h"
#include "addon/workers/status_worker.h"
#include "runtime/lane.h"

namespace flexpipe {

class RunWorker final : public StatusWorker {
  public:
    // With several threads the run executes on `lane` (the session's one compute thread) while this
    // worker's pool thread waits; with one thread it runs on the pool thread.
    RunWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, Lane* lane, int32_t program,
              uint64_t activation_base)
        : StatusWorker(env, busy), args_(session, program, activation_base), lane_(lane) {}

    RunArgs& args() { return args_; }

  protected:
    // One thread: no OpenMP team to keep warm, so the pool thread runs the program itself and the
    // two thread wake-ups of the lane handoff are saved (about 40 us per run on a 2-vCPU VM:
    // node dist/bench/models/call-overhead.js).
    Status work() override {
        if (args_.session()->threads() <= 1) return args_.execute();
        return lane_->run(&RunWorker::run_on_lane, this);
    }
    static Status run_on_lane(void* self) { return static_cast<RunWorker*>(self)->args_.execute(); }
    // With profiling, resolves with a Float64Array of per-op milliseconds.
    Napi::Value result(Napi::Env env) override { return args_.op_times(env); }

  private:
    RunArgs args_;
    Lane* lane_;
};

}  // namespace flexpipe
