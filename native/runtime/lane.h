// SPDX-License-Identifier: Apache-2.0
// Lane: one persistent thread that runs a session's tasks of one kind. A session has two: the compute
// lane (every run's ops) and the load lane (a pipelined run's reads, see addon/workers/pipeline_worker.h).
//
// Why a compute lane: libgomp keeps one OpenMP team per master thread. Runs queued as async work used
// to execute on whichever libuv pool thread was free, so a session whose runs landed on four pool
// threads had four teams; after each parallel region a team's workers spin-wait before sleeping, and
// on a small machine the spinning workers of the previous team stole the cores the current team
// needed. Measured on 2 cores (one BERT-style layer, 2 threads): median 2.9 ms, p95 4.5 ms on rotating
// pool threads; 2.2 ms, p95 2.9 ms with every run on one thread. Every run of a session now executes
// on its lane's thread (but a pipelined run at one thread, which has no team: its pool thread computes),
// so all its parallel regions start on one master thread and reuse one warm team. The JS thread posts
// a plain run to the lane directly (addon/workers/lane_run.h), so the run holds no pool thread either.
//
// Why a load lane: a pipelined run reads and computes at once from one pool thread (two pool threads
// that wait on each other could deadlock when other sessions hold the rest of libuv's pool), so the
// reads go to a thread of the session's own.
//
// The handoff allocates nothing (a function pointer and a context under a mutex), so runs stay
// allocation-free. One task at a time (each of the session's lanes is exclusive already).
//
// A plain run is posted (post: nobody waits; the task settles its promise itself); a pipelined run's
// pool thread starts both lanes and waits for them (start / wait).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/non_copyable.h"
#include "common/status.h"

namespace flexpipe {

class Lane : NonCopyable {
  public:
    using Task = Status (*)(void* context);

    // Starts the thread (call where allocation is allowed: not inside a run).
    Lane();
    // Finishes the task in progress, if any, and joins the thread.
    ~Lane();

    // Runs task(context) on the lane's thread and returns its status; blocks the caller meanwhile.
    Status run(Task task, void* context) {
        start(task, context);
        return wait();
    }
    // Hands task(context) to the lane's thread and returns at once; wait() collects its status.
    // One task at a time: call wait() before the next start().
    void start(Task task, void* context) { hand(task, context, true); }
    Status wait();
    // Hands task(context) to the lane's thread and returns at once; nobody waits, so the task
    // reports its own end (its status is dropped). One task at a time: the caller knows when the
    // task is over (it said so) before posting or starting the next.
    void post(Task task, void* context) { hand(task, context, false); }

  private:
    void hand(Task task, void* context, bool waited);
    void loop();

    std::mutex mutex_;
    std::condition_variable wake_;   // the lane: a task arrived or stop
    std::condition_variable done_;   // the caller: the task finished
    Task task_ = nullptr;
    void* context_ = nullptr;
    bool waited_ = false;  // the pending task's caller waits for it (start, not post)
    Status result_;
    bool finished_ = false;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace flexpipe
