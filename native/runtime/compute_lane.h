// SPDX-License-Identifier: Apache-2.0
// ComputeLane: one persistent thread on which a session runs all of its compute.
//
// Why: runs are queued from JS as async work, and libuv hands each one to whichever of its pool
// threads is free. libgomp keeps one OpenMP team per master thread, so a session whose runs land on
// four different pool threads ends up with four teams; after each parallel region a team's workers
// spin-wait before sleeping, and on a small machine the spinning workers of the previous team steal
// the cores the current team needs. Measured on 2 cores (one BERT-style layer, 2 threads): median
// 2.9 ms, p95 4.5 ms on rotating pool threads; 2.2 ms, p95 2.9 ms with every run on one thread.
// The lane makes the second case the only one: the pool thread that executes a run hands the work
// to the lane's thread and blocks until it is done, so every parallel region of the session starts
// on the same master thread and reuses one warm team.
//
// The handoff allocates nothing (a function pointer and a context under a mutex), so runs stay
// allocation-free. One run at a time (the session's compute lane is exclusive already).
//
// A session with one thread has no team to keep warm, and RunWorker skips the lane: the handoff's two
// thread wake-ups cost about 40 us per run on a 2-vCPU VM (bench/models/call-overhead.ts).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/status.h"

namespace flexpipe {

class ComputeLane {
  public:
    using Task = Status (*)(void* context);

    // Starts the thread (call where allocation is allowed: not inside a run).
    ComputeLane();
    // Finishes the task in progress, if any, and joins the thread.
    ~ComputeLane();
    ComputeLane(const ComputeLane&) = delete;
    ComputeLane& operator=(const ComputeLane&) = delete;

    // Runs task(context) on the lane's thread and returns its status; blocks the caller meanwhile.
    Status run(Task task, void* context);

  private:
    void loop();

    std::mutex mutex_;
    std::condition_variable wake_;   // the lane: a task arrived or stop
    std::condition_variable done_;   // the caller: the task finished
    Task task_ = nullptr;
    void* context_ = nullptr;
    Status result_;
    bool finished_ = false;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace flexpipe
