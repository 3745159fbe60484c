// SPDX-License-Identifier: Apache-2.0
// LaneRuns: start a run on the JS thread, execute it on the lane, settle it on the JS thread.
#include "addon/workers/lane_run.h"

#include <memory>

#include "addon/convert.h"
#include "alloc/alloc_audit.h"

namespace flexpipe {

LaneRuns::~LaneRuns() {
    if (!open_) return;
    link_->owner = nullptr;
    done_.Release();  // the finalizer deletes the link
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
    }
    done_.Ref(env);  // until settle: a run in flight keeps the event loop alive
    run->runs_ = this;
    Napi::Promise promise = run->deferred_.Promise();
    lane->post(&LaneRuns::on_lane, owned.release());
    return promise;
}

Status LaneRuns::on_lane(void* p) {
    auto* run = static_cast<LaneRun*>(p);
    {
        AllocAuditScope audit;  // the run itself allocates nothing (counted in FLEXPIPE_ALLOC_AUDIT builds)
        run->status_ = run->args_.execute();
    }
    // Fails only while the environment tears down, when there is nothing left to settle.
    run->runs_->done_.NonBlockingCall(run);
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
