// SPDX-License-Identifier: Apache-2.0
// ReadWorker: reads byte ranges of a file into the arena off the event loop (io_uring or pread).
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "addon/workers/status_worker.h"
#include "runtime/session.h"

namespace flexpipe {

class ReadWorker final : public StatusWorker {
  public:
    ReadWorker(Napi::Env env, std::atomic<bool>* busy, Session* session, std::string path)
        : StatusWorker(env, busy), session_(session), path_(std::move(path)) {}

    // ranges: Float64Array of [fileOffset, length, arenaOffset] triples.
    void collect(const Napi::Value& owner, const Napi::Value& ranges);

  protected:
    Status work() override { return session_->read_file(path_, ranges_.data(), ranges_.size()); }

  private:
    Session* session_;
    std::string path_;
    std::vector<FileRange> ranges_;
    Napi::ObjectReference owner_;
};

}  // namespace flexpipe
