// SPDX-License-Identifier: Apache-2.0
// `_testing.allocAudit()`, `allocAuditReset()`, `allocAuditProbe(n)`: the allocation audit (alloc/alloc_audit.h).
#include <cstdlib>
#include <memory>
#include <utility>

#include "addon/testing.h"
#include "addon/workers/status_worker.h"
#include "alloc/alloc_audit.h"

namespace flexpipe {

namespace {

// The audit's positive control: n malloc and n new[] calls inside worker work (2n allocations counted
// in the audit build), so a test can show the counter sees allocations before trusting its zeros.
class AllocProbeWorker final : public StatusWorker {
  public:
    AllocProbeWorker(Napi::Env env, int64_t n) : StatusWorker(env, nullptr), n_(n) {}

  protected:
    Status work() override {
        for (int64_t i = 0; i < n_; ++i) {
            sink_ = std::malloc(64);  // through a volatile member so the pair is not optimised away
            std::free(sink_);
            int* q = new int[4];
            sink_ = q;
            delete[] q;
        }
        return Status::ok();
    }

  private:
    int64_t n_;
    void* volatile sink_ = nullptr;
};

}  // namespace

namespace testing_js {

// allocAudit() -> { enabled, allocations }: allocations counted inside run/readFile work since the reset.
Napi::Value alloc_audit(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("enabled", Napi::Boolean::New(info.Env(), alloc_audit_enabled()));
    o.Set("allocations", Napi::Number::New(info.Env(), static_cast<double>(alloc_audit_count())));
    return o;
}

Napi::Value alloc_audit_reset(const Napi::CallbackInfo& info) {
    flexpipe::alloc_audit_reset();
    return info.Env().Undefined();
}

// allocAuditProbe(n) -> Promise<undefined>
Napi::Value alloc_audit_probe(const Napi::CallbackInfo& info) {
    const int64_t n = integer_arg(info[0], 0, 1 << 20, "n");
    auto worker = std::make_unique<AllocProbeWorker>(info.Env(), n);
    return StatusWorker::queue(std::move(worker));
}

}  // namespace testing_js

}  // namespace flexpipe
