// SPDX-License-Identifier: Apache-2.0
// Lane: the handoff between the thread that has a task (the JS thread, a pool thread) and one of the
// session's own threads.
#include "runtime/lane.h"

#include <utility>

namespace flexpipe {

Lane::Lane() : thread_([this] { loop(); }) {}

Lane::~Lane() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void Lane::hand(Task task, void* context, bool waited) {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    context_ = context;
    waited_ = waited;
    if (waited) finished_ = false;
    wake_.notify_one();
}

Status Lane::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return finished_; });
    return std::move(result_);
}

void Lane::loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stop_ || task_ != nullptr; });
        if (task_ == nullptr) return;  // stop, nothing pending
        Task task = task_;
        void* context = context_;
        const bool waited = waited_;
        task_ = nullptr;
        lock.unlock();
        Status s;
#if defined(__cpp_exceptions)
        try {
            s = task(context);
        } catch (...) {  // a task must return a Status; never let an exception end the process
            s = Status::error(StatusCode::internal, "failed to run a computation: an unexpected C++ exception escaped it");
        }
#else
        s = task(context);  // built without exceptions (the cmake build): nothing can escape
#endif
        lock.lock();
        // A posted task reported its own end, and the caller may have handed the lane its next task
        // since: only a waited task's end is recorded.
        if (waited) {
            result_ = std::move(s);
            finished_ = true;
            done_.notify_one();
        }
    }
}

}  // namespace flexpipe
