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

    // ranges: Float64Array of [fileOffset, length, arenaOffset] triples; options: undefined or
    // { direct?: boolean, bandwidth?: number (bytes/s, positive and finite) }.
    void collect(const Napi::Value& owner, const Napi::Value& ranges, const Napi::Value& options);

  protected:
    Status work() override {
        return session_->read_file(path_, ranges_.data(), ranges_.size(), options_, requests_.data(), &result_);
    }
    // Resolves with { direct, bytes, ms }.
    Napi::Value result(Napi::Env env) override;

  private:
    void collect_options(const Napi::Value& options);

    Session* session_;
    std::string path_;
    std::vector<FileRange> ranges_;
    std::vector<ReadRequest> requests_;  // scratch for read_file, sized here so the read allocates nothing
    ReadOptions options_;
    ReadResult result_;
    Napi::ObjectReference owner_;
};

}  // namespace flexpipe
