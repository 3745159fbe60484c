// SPDX-License-Identifier: Apache-2.0
// SessionWrap: the JS-visible Session class (ObjectWrap over runtime/session.h).
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "addon/workers/lane_run.h"
#include "runtime/lane.h"
#include "runtime/session.h"

namespace flexpipe {

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
  public:
    static Napi::Function define(Napi::Env env);
    explicit SessionWrap(const Napi::CallbackInfo& info);

  private:
    Napi::Value resize(const Napi::CallbackInfo& info);
    Napi::Value write(const Napi::CallbackInfo& info);
    Napi::Value write_batch(const Napi::CallbackInfo& info);
    Napi::Value read(const Napi::CallbackInfo& info);
    Napi::Value add_program(const Napi::CallbackInfo& info);
    Napi::Value remove_program(const Napi::CallbackInfo& info);
    Napi::Value run(const Napi::CallbackInfo& info);
    Napi::Value read_file(const Napi::CallbackInfo& info);
    Napi::Value run_pipeline(const Napi::CallbackInfo& info);
    Napi::Value stats(const Napi::CallbackInfo& info);
    Napi::Value set_threads(const Napi::CallbackInfo& info);
    Napi::Value dispose(const Napi::CallbackInfo& info);

    // The long operations in flight: one run (compute lane) and one readFile (load lane) may
    // overlap; everything that changes session state needs both lanes idle (see runtime/session.h).
    enum class Claim { none, compute, load, both };
    // Throws ERR_FLEXPIPE_DISPOSED.
    void check_alive(Napi::Env env, const char* what);
    // Throws ERR_FLEXPIPE_DISPOSED / ERR_FLEXPIPE_BUSY. Claim::none: both lanes must be idle;
    // Claim::compute / Claim::load: claims that lane (the worker frees it when it settles).
    void check_usable(Napi::Env env, const char* what, Claim claim);
    // write (to_arena) and read: info = (offset, typedArray).
    Napi::Value copy_bytes(const Napi::CallbackInfo& info, bool to_arena);
    // Frees the lanes of `claim` (Claim::both: both).
    void release(Claim claim) {
        if (claim == Claim::compute || claim == Claim::both) compute_busy_.store(false);
        if (claim == Claim::load || claim == Claim::both) load_busy_.store(false);
    }
    // check_usable(claim), then start(): it hands the claimed lanes to a worker, which frees them when it
    // settles; if start throws instead, they are freed here.
    template <class Start>
    Napi::Value start_claimed(Napi::Env env, const char* what, Claim claim, Start&& start) {
        check_usable(env, what, claim);
        try {
            return start();
        } catch (...) {
            release(claim);
            throw;
        }
    }
    std::atomic<bool>* lane_flag(Claim claim) { return claim == Claim::compute ? &compute_busy_ : &load_busy_; }

    std::unique_ptr<Session> session_;
    // Every run of the session executes on this one thread (runtime/lane.h says why).
    std::unique_ptr<Lane> lane_;
    // A pipelined run's reads execute on this one (runtime/lane.h).
    std::unique_ptr<Lane> load_lane_;
    // Plain runs go from the JS thread to lane_ and are settled through this (workers/lane_run.h).
    LaneRuns runs_;
    std::atomic<bool> compute_busy_{false};
    std::atomic<bool> load_busy_{false};
};

}  // namespace flexpipe
