// SPDX-License-Identifier: Apache-2.0
// PipelineGate: counters, waits and the per-load throttle of a pipelined run.
#include "runtime/pipeline_gate.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

namespace flexpipe {
namespace {

constexpr int64_t nobody = std::numeric_limits<int64_t>::max();

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

Status PipelineGate::validate(const PipelineSchedule& s) {
    const auto loads = static_cast<int64_t>(s.loads);
    for (size_t k = 0; k < s.ops; ++k) {
        const int32_t n = s.need[k];
        if (n < 0 || n > loads || (k > 0 && n < s.need[k - 1])) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run pipeline: need[%zu] = %d must lie in [need[%zu], %lld] (loads that op "
                                 "waits for: a prefix of the load queue that grows with the op)",
                                 k, n, k == 0 ? k : k - 1, static_cast<long long>(loads));
        }
    }
    for (size_t j = 0; j < s.loads; ++j) {
        const int32_t a = s.after[j];
        if (a < -1 || a >= static_cast<int64_t>(s.ops)) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run pipeline: after[%zu] = %d is not -1 or an op (ops=%zu)", j, a, s.ops);
        }
        if (a >= 0 && s.need[a] > static_cast<int64_t>(j)) {
            return Status::error(StatusCode::invalid_argument,
                                 "failed to run pipeline: load %zu waits for op %d, which waits for %d loads: the "
                                 "schedule would deadlock",
                                 j, a, s.need[a]);
        }
    }
    return Status::ok();
}

PipelineGate::PipelineGate(const PipelineSchedule& s, PipelineGateScratch scratch, double bandwidth)
    : s_(s), scratch_(scratch), bandwidth_(bandwidth > 0 ? bandwidth : 0), load_waits_for_ops_(nobody),
      compute_waits_for_loads_(nobody) {
    start_ns_ = now_ns();
    int64_t done = 0;
    for (size_t j = 0; j < s.loads; ++j) {
        scratch_.remaining[j].store(s.bytes[j]);
        scratch_.deadline_ns[j] = 0;
        scratch_.load_end_ns[j] = 0;
    }
    while (done < static_cast<int64_t>(s.loads) && s.bytes[done] == 0) ++done;  // empty loads are in already
    loads_done_.store(done);
}

// The waiter publishes its target, then checks the counter; the other lane publishes the counter, then
// checks the target (both sequentially consistent), so one of them always sees the other's write: no
// wake-up is lost although the notifier skips the lock when nobody waits for its value.
bool PipelineGate::block_until(const std::atomic<int64_t>& counter, int64_t target, std::atomic<int64_t>* waits_for,
                               std::condition_variable* changed, std::atomic<int64_t>* waited_ns) {
    if (counter.load() >= target) return true;
    const int64_t t0 = now_ns();
    std::unique_lock<std::mutex> lock(mutex_);
    waits_for->store(target);
    changed->wait(lock, [&] { return counter.load() >= target || stopped_.load(); });
    waits_for->store(nobody);
    waited_ns->fetch_add(now_ns() - t0);
    return counter.load() >= target;
}

void PipelineGate::wake(int64_t value, const std::atomic<int64_t>& waits_for, std::condition_variable* changed) {
    if (waits_for.load() > value) return;
    { std::lock_guard<std::mutex> lock(mutex_); }  // the waiter is inside wait() or will see the value
    changed->notify_all();
}

void PipelineGate::stop() {
    stopped_.store(true);
    { std::lock_guard<std::mutex> lock(mutex_); }
    ops_changed_.notify_all();
    loads_changed_.notify_all();
}

Status PipelineGate::before(size_t op) {
    if (block_until(loads_done_, s_.need[op], &compute_waits_for_loads_, &loads_changed_, &compute_wait_ns_)) {
        if (scratch_.op_start_ns) scratch_.op_start_ns[op] = now_ns() - start_ns_;
        return Status::ok();
    }
    return Status::error(StatusCode::cancelled, "stopped before op %zu: the loads it needs did not finish", op);
}

void PipelineGate::after(size_t op) {
    if (scratch_.op_end_ns) scratch_.op_end_ns[op] = now_ns() - start_ns_;
    const auto done = static_cast<int64_t>(op) + 1;
    ops_done_.store(done);
    wake(done, load_waits_for_ops_, &ops_changed_);
}

bool PipelineGate::ready(size_t load) {
    if (stopped_.load() || !load_may_start(load)) return false;
    if (bandwidth_ > 0 && scratch_.deadline_ns[load] == 0) {  // the load starts now: book the emulated device
        std::lock_guard<std::mutex> lock(mutex_);
        const auto need_ns = static_cast<int64_t>(static_cast<double>(s_.bytes[load]) / bandwidth_ * 1e9);
        device_free_ns_ = std::max(device_free_ns_, now_ns()) + need_ns;
        scratch_.deadline_ns[load] = device_free_ns_;
    }
    return true;
}

bool PipelineGate::wait_ready(size_t load) {
    const int32_t a = s_.after[load];
    if (a >= 0 && !block_until(ops_done_, static_cast<int64_t>(a) + 1, &load_waits_for_ops_, &ops_changed_, &load_wait_ns_)) {
        return false;
    }
    return ready(load);
}

void PipelineGate::read_bytes(size_t load, uint64_t bytes) {
    if (scratch_.remaining[load].fetch_sub(bytes) != bytes) return;  // more of this load to come
    if (bandwidth_ > 0) {
        const int64_t until = scratch_.deadline_ns[load];
        for (int64_t t = now_ns(); t < until; t = now_ns()) std::this_thread::sleep_for(std::chrono::nanoseconds(until - t));
    }
    // A load is in once its end is recorded, after its throttle deadline: with the pread reader another
    // thread may finish a later load meanwhile, and must not count this one in before the deadline.
    int64_t done;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        scratch_.load_end_ns[load] = std::max<int64_t>(1, now_ns() - start_ns_);
        done = loads_done_.load();
        while (done < static_cast<int64_t>(s_.loads) && (s_.bytes[done] == 0 || scratch_.load_end_ns[done] != 0)) ++done;
        loads_done_.store(done);
    }
    wake(done, compute_waits_for_loads_, &loads_changed_);
}

}  // namespace flexpipe
