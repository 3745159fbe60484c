// SPDX-License-Identifier: Apache-2.0
// PipelineGate: the dependency-based sync of one pipelined run (FlexNN's load and compute queues).
//
//   load j starts once op after[j] is done     comp(after_j) < load(j): load j's bytes reuse arena
//                                              memory that op after[j] reads last (-1: no wait)
//   op k runs once loads [0, need[k]) are in   load(j) < comp(step_j): every weight op k reads is in
//
// TypeScript plans both queues and their edges (lib/plan/budget/pipeline-edges.ts) and hands them over
// with the run (Session::run + Session::read_file, started together by addon/workers/pipeline_worker);
// the compute lane waits in before(k), the load lane in ready(j) / wait_ready(j), and neither lane
// waits on anything else. Loads start in queue order and ops run in order, so a schedule in which
// every load j waits only for an op that needs fewer than j + 1 loads cannot deadlock (validate()).
//
// A throttle (bandwidth > 0) emulates a slow device for the whole queue: load j may not complete before
// max(start of j, deadline of j - 1) + bytes_j / bandwidth, so compute sees each weight when a device
// of that speed would have delivered it.
//
// Nothing here allocates: the per-load arrays are the caller's, sized before the run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "common/status.h"
#include "io/reader.h"
#include "runtime/program.h"

namespace flexpipe {

struct PipelineSchedule {
    const int32_t* after = nullptr;   // per load: the op that must be done first (-1: none)
    const int32_t* need = nullptr;    // per op: loads (a prefix of the queue) that must be in first
    const uint64_t* bytes = nullptr;  // per load
    size_t loads = 0, ops = 0;
};

// Per-load and per-op state the caller owns, so that the gate allocates nothing.
struct PipelineGateScratch {
    std::atomic<uint64_t>* remaining = nullptr;  // bytes of load j still to read
    int64_t* deadline_ns = nullptr;              // throttle: when load j may complete (0: not started)
    // The timeline, in ns since the gate was made: when load j was in (always; 0 until it is), when op k started
    // (after its wait) and ended (both optional: null records nothing).
    int64_t* load_end_ns = nullptr;
    int64_t* op_start_ns = nullptr;
    int64_t* op_end_ns = nullptr;
};

class PipelineGate final : public OpGate, public ReadGate {
  public:
    // Checks ranges, monotone need, and the no-deadlock condition need[after[j]] <= j.
    static Status validate(const PipelineSchedule& s);

    // s must pass validate(); bandwidth in bytes per second (0: unthrottled).
    PipelineGate(const PipelineSchedule& s, PipelineGateScratch scratch, double bandwidth);

    // Ends the pipeline: wakes every waiter; waits from now on fail (the other lane's error is the cause).
    void stop();

    // OpGate (the compute lane).
    Status before(size_t op) override;
    void after(size_t op) override;
    // ReadGate (the load lane).
    bool ready(size_t load) override;
    bool wait_ready(size_t load) override;
    void read_bytes(size_t load, uint64_t bytes) override;

    // Milliseconds each lane spent blocked on the other.
    double compute_wait_ms() const { return compute_wait_ns_.load() * 1e-6; }
    double load_wait_ms() const { return load_wait_ns_.load() * 1e-6; }

  private:
    bool load_may_start(size_t load) const {
        const int32_t a = s_.after[load];
        return a < 0 || ops_done_.load() > a;
    }
    // Blocks on `changed` until counter >= target or stop; true when the counter got there. While it
    // blocks, *waits_for holds target, so that the other lane wakes it only when it is worth it (one
    // wake-up per wait, not one per op or chunk: on a 2-core machine every wake-up preempts compute).
    bool block_until(const std::atomic<int64_t>& counter, int64_t target, std::atomic<int64_t>* waits_for,
                     std::condition_variable* changed, std::atomic<int64_t>* waited_ns);
    // After counter grew to value: wakes the lane waiting on `changed` if its target is reached.
    void wake(int64_t value, const std::atomic<int64_t>& waits_for, std::condition_variable* changed);

    PipelineSchedule s_;
    PipelineGateScratch scratch_;
    double bandwidth_;
    std::atomic<int64_t> ops_done_{0};    // ops [0, ops_done) are done
    std::atomic<int64_t> loads_done_{0};  // loads [0, loads_done) are in memory
    std::atomic<bool> stopped_{false};
    std::atomic<int64_t> compute_wait_ns_{0};
    std::atomic<int64_t> load_wait_ns_{0};
    std::atomic<int64_t> load_waits_for_ops_;     // ops_done the load lane sleeps for (max: not asleep)
    std::atomic<int64_t> compute_waits_for_loads_;  // loads_done the compute lane sleeps for
    std::mutex mutex_;  // guards the waits, the prefix advance and the throttle clock
    std::condition_variable ops_changed_;    // the load lane sleeps on it
    std::condition_variable loads_changed_;  // the compute lane sleeps on it
    int64_t device_free_ns_ = 0;  // throttle: when the emulated device finishes the loads started so far
    int64_t start_ns_ = 0;        // when the gate was made: the timeline's zero
};

}  // namespace flexpipe
