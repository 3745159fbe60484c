// SPDX-License-Identifier: Apache-2.0
// LaneRun: one run of a program, handed by the JS thread straight to the session's compute lane and
// settled back on the JS thread, with no libuv pool thread in between.
//
// Why not an AsyncWorker: its work runs on a libuv pool thread, which would only hand the run to the
// lane (runtime/lane.h says why every run executes there) and block until it is done: two more thread
// wake-ups per call, each a scheduling delay on a small machine where the run's OpenMP workers still
// spin on the cores (node dist/bench/models/call-overhead.js measures what a call costs beyond its ops).
//
// LaneRuns, one per session, owns the threadsafe function through which the lane reports a finished
// run; the JS thread then settles the run's promise and deletes the run. The function is made on
// the session's first run and is referenced only while a run is in flight, so an idle session does
// not keep the event loop alive, and a run in flight does, as a queued AsyncWorker would.
//
// An environment that ends while a run executes (a Worker terminated, process.exit) first waits for
// the run to finish on the lane (an environment cleanup hook): its ops write into the caller's arrays
// and its end calls the threadsafe function, both of which the environment is about to free. The run
// is then never settled.
#pragma once

#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "addon/workers/run_args.h"
#include "common/non_copyable.h"
#include "common/status.h"
#include "runtime/lane.h"

namespace flexpipe {

class LaneRuns;

class LaneRun : NonCopyable {
  public:
    // busy: the session's compute flag, cleared when the run settles.
    LaneRun(Napi::Env env, std::atomic<bool>* busy, Session* session, int32_t program, uint64_t activation_base)
        : args_(session, program, activation_base), busy_(busy), deferred_(Napi::Promise::Deferred::New(env)) {}

    RunArgs& args() { return args_; }

  private:
    friend class LaneRuns;
    RunArgs args_;
    std::atomic<bool>* busy_;
    Napi::Promise::Deferred deferred_;
    LaneRuns* runs_ = nullptr;
    Status status_;
};

class LaneRuns : NonCopyable {
  public:
    LaneRuns() = default;
    ~LaneRuns();

    // Hands the run to the lane and returns its promise, which resolves with undefined or, with
    // profiling, a Float64Array of per-op milliseconds, and rejects with a coded error. Takes
    // ownership: the run is deleted once settled. Throws (nothing started, run deleted) if the
    // threadsafe function cannot be made. JS thread; one run at a time (the compute flag).
    Napi::Promise start(Napi::Env env, Lane* lane, LaneRun* run);

  private:
    static void settle(Napi::Env env, Napi::Function, LaneRuns* self, LaneRun* run);
    static Status on_lane(void* run);
    // The environment's cleanup hook: waits until no run executes.
    static void on_env_cleanup(void* self);
    using Done = Napi::TypedThreadSafeFunction<LaneRuns, LaneRun, &LaneRuns::settle>;
    // The function's finalizer runs either after ~LaneRuns released it or when the environment
    // tears down first; the link tells it whether this object still exists.
    struct Link {
        LaneRuns* owner;
    };

    Done done_;
    Link* link_ = nullptr;  // owned by the function's finalizer
    bool open_ = false;     // done_ exists and is not finalized
    napi_env env_ = nullptr;   // where the cleanup hook is registered (with done_)
    bool hooked_ = false;      // the hook is registered and has not run
    std::mutex mutex_;
    std::condition_variable idle_;
    int executing_ = 0;        // runs started and not yet done with the lane (0 or 1, briefly 2)
};

}  // namespace flexpipe
