// SPDX-License-Identifier: Apache-2.0
// ReadWorker: reads byte ranges of a file into the arena off the event loop (io_uring or pread).
#pragma once

#include <napi.h>

#include <string>

#include "addon/workers/read_args.h"
#include "addon/workers/status_worker.h"

namespace flexpipe {

class ReadWorker final : public StatusWorker {
  public:
    ReadWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, std::string path)
        : StatusWorker(env, busy), args_(session, std::move(path)) {}

    ReadArgs& args() { return args_; }

  protected:
    Status work() override { return args_.execute(); }
    // Resolves with { direct, bytes, ms }.
    Napi::Value result(Napi::Env env) override { return args_.result(env); }

  private:
    ReadArgs args_;
};

}  // namespace flexpipe
