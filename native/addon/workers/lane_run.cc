// SPDX-License-Identifier: Apache-2.0
// LaneRuns: start a run on the JS thread, execute it on the lane, settle it on the JS thread.
#include "addon/workers/lane_run.h"

#include <memory>

#include "addon/convert.h"
#include "alloc/alloc_audit.h"

namespace flexpipe {

LaneRuns::~LaneRuns() {
    {
        // The last run's lane thread may still be on its way out of on_lane (its promise settled,
        // the session collected since).
        std::unique_lock<std::mutex> lock(mutex_);
        idle_.wait(lock, [this] { return executing_ == 0; });
    }
    if (hooked_) napi_remove_env_cleanup_hook(env_, &LaneRuns::on_env_cleanup, this);
    if (!open_) return;
    link_->owner = nullptr;
    done_.Release();  // the finalizer deletes the link
}

void LaneRuns::on_env_cleanup(void* p) {
    auto* self = static_cast<LaneRuns*>(p);
    self->hooked_ = false;  // a hook runs once; the environment forgets it
    std::unique_lock<std::mutex> lock(self->mutex_);
    self->idle_.wait(lock, [self] { return self->executing_ == 0; });
}

Napi::Promise LaneRuns::start(Napi::Env env, Lane* lane, LaneRun* run) {
    std::unique_ptr<LaneRun> owned(run);
    if (!open_) {
        auto link = std::make_unique<Link>(Link{this});
        done_ = Done::New(env, "flexpipe.run", 0, 1, this,
                          [](Napi::Env, Link* l, LaneRuns*) {
                              if (l->owner) l->owner->open_ = false;
                              delete l;
                          },
                          link.get());
        link_ = link.release();
        open_ = true;
        done_.Unref(env);
        env_ = env;
        if (napi_add_env_cleanup_hook(env, &LaneRuns::on_env_cleanup, this) != napi_ok) {
            throw Napi::Error::New(env, "run: failed to register the session's environment cleanup hook");
        }
        hooked_ = true;
    }
    done_.Ref(env);  // until settle: a run in flight keeps the event loop alive
    run->runs_ = this;
    Napi::Promise promise = run->deferred_.Promise();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++executing_;
    }
    lane->post(&LaneRuns::on_lane, owned.release());
    return promise;
}

Status LaneRuns::on_lane(void* p) {
    auto* run = static_cast<LaneRun*>(p);
    {
        AllocAuditScope audit;  // the run itself allocates nothing (counted in FLEXPIPE_ALLOC_AUDIT builds)
        run->status_ = run->args_.execute();
    }
    LaneRuns* self = run->runs_;
    // Fails only while the environment tears down, when there is nothing left to settle.
    self->done_.NonBlockingCall(run);
    {
        // Counted down after the call, so that a cleanup hook waiting for it lets the environment
        // free the function only once the lane is done with it.
        // Notified under the lock: once the hook can return, this thread no longer touches self.
        std::lock_guard<std::mutex> lock(self->mutex_);
        --self->executing_;
        self->idle_.notify_all();
    }
    return Status::ok();
}

void LaneRuns::settle(Napi::Env env, Napi::Function, LaneRuns* self, LaneRun* run) {
    run->busy_->store(false);
    if (env == nullptr) return;  // the environment is going away: the run is left to it
    std::unique_ptr<LaneRun> owned(run);
    Napi::HandleScope scope(env);
    self->done_.Unref(env);
    if (run->status_.is_ok()) run->deferred_.Resolve(run->args_.op_times(env));
    else run->deferred_.Reject(status_to_error(env, run->status_).Value());
}

}  // namespace flexpipe
