// SPDX-License-Identifier: Apache-2.0
// RunWorker: runs one program off the event loop; pins its session and the caller's arrays.
#pragma once

#include <napi.h>

#include <vector>

#include "addon/workers/status_worker.h"
#include "runtime/session.h"

namespace flexpipe {

class RunWorker final : public StatusWorker {
  public:
    RunWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, int32_t program, uint64_t activation_base)
        : StatusWorker(env, busy), session_(session), program_(program), activation_base_(activation_base) {}

    // Reads [tensorId, TypedArray] pairs, keeps references to the arrays, and validates sizes.
    void collect(const Napi::Value& owner, const Napi::Value& inputs, const Napi::Value& outputs);

  protected:
    Status work() override {
        return session_->run(program_, activation_base_, inputs_.data(), inputs_.size(), outputs_.data(),
                             outputs_.size());
    }

  private:
    void collect_list(const Napi::Value& list, const char* what, std::vector<HostBuffer>* out);

    Session* session_;
    int32_t program_;
    uint64_t activation_base_;
    std::vector<HostBuffer> inputs_;
    std::vector<HostBuffer> outputs_;
    std::vector<Napi::ObjectReference> pins_;
};

}  // namespace flexpipe
