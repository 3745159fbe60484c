// SPDX-License-Identifier: Apache-2.0
// Lane: one persistent thread that runs a session's tasks of one kind. A session has two: the compute
// lane (every run's ops) and the load lane (a pipelined run's reads, see addon/workers/pipeline_worker.h).
//
// Why a compute lane: runs are queued from JS as async work, and libuv hands each one to whichever of
// its pool threads is free. libgomp keeps one OpenMP team per master thread, so a session whose runs
// land on four different pool threads ends up with four teams; after each parallel region a team's
// workers spin-wait before sleeping, and on a small machine the spinning workers of the previous team
// steal the cores the current team needs. Measured on 2 cores (one BERT-style layer, 2 threads):
// median 2.9 ms, p95 4.5 ms on rotating pool threads; 2.2 ms, p95 2.9 ms with every run on one thread.
// The lane makes the second case the only one: the pool thread that executes a run hands the work
// to the lane's thread and blocks until it is done, so every parallel region of the session starts
// on the same master thread and reuses one warm team.
//
// Why a load lane: a pipelined run reads and computes at once from one pool thread (two pool threads
// that wait on each other could deadlock when other sessions hold the rest of libuv's pool), so the
// reads go to a thread of the session's own.
//
// The handoff allocates nothing (a function pointer and a context under a mutex), so runs stay
// allocation-free. One task at a time (each of the session's lanes is exclusive already).
//
// A session with one thread has no team to keep warm, and RunWorker skips the compute lane: the
// handoff's two thread wake-ups cost about 40 us per run on a 2-vCPU VM (bench/models/call-overhead.ts).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/status.h"

namespace flexpipe {

class Lane {
  public:
    using Task = Status (*)(void* context);

    // Starts the thread (call where allocation is allowed: not inside a run).
    Lane();
    // Finishes the task in progress, if any, and joins the thread.
    ~Lane();
    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;

    // Runs task(context) on the lane's thread and returns its status; blocks the caller meanwhile.
    Status run(Task task, void* context) {
        start(task, context);
        return wait();
    }
    // Hands task(context) to the lane's thread and returns at once; wait() collects its status.
    // One task at a time: call wait() before the next start().
    void start(Task task, void* context);
    Status wait();

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
