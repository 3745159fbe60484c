// SPDX-License-Identifier: Apache-2.0
// StatusWorker: an AsyncWorker whose work returns a Status and settles a Promise with a coded error.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "addon/convert.h"
#include "alloc/alloc_audit.h"
#include "common/status.h"

namespace flexpipe {

class StatusWorker : public Napi::AsyncWorker {
  public:
    // busy (and also_busy) are cleared when the worker settles: the session lanes it holds.
    StatusWorker(Napi::Env env, std::atomic<bool>* busy, std::atomic<bool>* also_busy = nullptr)
        : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), busy_(busy), also_busy_(also_busy) {}
    Napi::Promise promise() { return deferred_.Promise(); }

    // Queues the worker (N-API owns and deletes it from here on) and returns its promise.
    static Napi::Promise queue(std::unique_ptr<StatusWorker> worker) {
        Napi::Promise promise = worker->promise();
        worker.release()->Queue();
        return promise;
    }

  protected:
    virtual Status work() = 0;
    // The value the promise resolves with (undefined unless a worker overrides it).
    virtual Napi::Value result(Napi::Env env) { return env.Undefined(); }
    // The work runs inside an allocation audit scope (counted only in FLEXPIPE_ALLOC_AUDIT builds).
    void Execute() override {
        AllocAuditScope audit;
        status_ = work();
    }
    void OnOK() override {
        release();
        Napi::HandleScope scope(Env());
        if (status_.is_ok()) deferred_.Resolve(result(Env()));
        else deferred_.Reject(status_to_error(Env(), status_).Value());
    }
    void OnError(const Napi::Error& e) override {
        release();
        deferred_.Reject(e.Value());
    }

  private:
    void release() {
        if (busy_) busy_->store(false);
        if (also_busy_) also_busy_->store(false);
    }

    Napi::Promise::Deferred deferred_;
    std::atomic<bool>* busy_;
    std::atomic<bool>* also_busy_;
    Status status_;
};

}  // namespace flexpipe
