// SPDX-License-Identifier: Apache-2.0
// SessionWrap: the JS-visible Session class (ObjectWrap over runtime/session.h).
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "runtime/session.h"

namespace flexpipe {

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
  public:
    static Napi::Function define(Napi::Env env);
    explicit SessionWrap(const Napi::CallbackInfo& info);

  private:
    Napi::Value resize(const Napi::CallbackInfo& info);
    Napi::Value write(const Napi::CallbackInfo& info);
    Napi::Value read(const Napi::CallbackInfo& info);
    Napi::Value add_program(const Napi::CallbackInfo& info);
    Napi::Value remove_program(const Napi::CallbackInfo& info);
    Napi::Value run(const Napi::CallbackInfo& info);
    Napi::Value read_file(const Napi::CallbackInfo& info);
    Napi::Value stats(const Napi::CallbackInfo& info);
    Napi::Value set_threads(const Napi::CallbackInfo& info);
    Napi::Value dispose(const Napi::CallbackInfo& info);

    // Throws ERR_FLEXPIPE_DISPOSED / ERR_FLEXPIPE_BUSY; marks busy when `claim` is set.
    void check_usable(Napi::Env env, const char* what, bool claim);

    std::unique_ptr<Session> session_;
    std::atomic<bool> busy_{false};
};

}  // namespace flexpipe
