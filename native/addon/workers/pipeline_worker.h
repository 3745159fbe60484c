// SPDX-License-Identifier: Apache-2.0
// PipelineWorker: one pipelined run — a program's ops and a file's loads at once, each waiting for
// the other only through the schedule's edges (runtime/pipeline_gate.h). It holds both lanes of the
// session: the reads execute on the session's load lane, the ops on its compute lane (or on this
// worker's pool thread with one thread), and the worker's pool thread waits for both. One pool
// thread per pipelined run, so runs of several sessions cannot starve each other of pool threads.
//
// If either side fails the gate is stopped, the other side ends at its next wait, and the promise
// rejects with the first side's error (a failed read's ERR_FLEXPIPE_IO, not the op it starved).
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "addon/workers/read_args.h"
#include "addon/workers/run_args.h"
#include "addon/workers/status_worker.h"
#include "runtime/lane.h"
#include "runtime/pipeline_gate.h"

namespace flexpipe {

class PipelineWorker final : public StatusWorker {
  public:
    PipelineWorker(Napi::Env env, std::atomic<bool>* compute_busy, std::atomic<bool>* load_busy, Session* session,
                   Lane* compute_lane, Lane* load_lane, int32_t program, uint64_t activation_base, std::string path)
        : StatusWorker(env, compute_busy, load_busy),
          run_(session, program, activation_base),
          read_(session, std::move(path)),
          compute_lane_(compute_lane),
          load_lane_(load_lane) {}

    RunArgs& run_args() { return run_; }
    ReadArgs& read_args() { return read_; }
    // after: Int32Array, one per range (the op that must finish before the range is read, -1: none);
    // need: Int32Array, one per op of the program (loads that must be in before it runs). Checks
    // that the run covers the whole program and that the schedule cannot deadlock.
    void set_schedule(const Napi::Value& after, const Napi::Value& need);

  protected:
    Status work() override;
    // Resolves with { ops, direct, bytes, ms, computeWaitMs, loadWaitMs, loadEndMs, opStartMs, opEndMs }:
    // loadEndMs (per range) when each load was in, and with profiling opStartMs / opEndMs (per op) when
    // each op started after its wait and ended, all in ms since the gate was made; ops and the op
    // times are undefined without profiling.
    Napi::Value result(Napi::Env env) override;

  private:
    static Status load_on_lane(void* self);
    static Status compute_on_lane(void* self);

    RunArgs run_;
    ReadArgs read_;
    Lane* compute_lane_;
    Lane* load_lane_;
    std::vector<int32_t> after_, need_;
    std::vector<uint64_t> bytes_;  // per range, as the gate reads them
    PipelineSchedule schedule_;    // over after_, need_ and bytes_, checked by set_schedule
    std::unique_ptr<std::atomic<uint64_t>[]> remaining_;
    std::vector<int64_t> deadline_ns_;
    std::vector<int64_t> load_end_ns_, op_start_ns_, op_end_ns_;  // the run's timeline (the gate's scratch)
    PipelineGate* gate_ = nullptr;  // lives on work()'s stack while the lanes run
    double compute_wait_ms_ = 0, load_wait_ms_ = 0;
};

}  // namespace flexpipe
