// SPDX-License-Identifier: Apache-2.0
// ReadArgs: what one file read needs from JS (path, [fileOffset, length, arenaOffset] ranges, options),
// collected and checked on the JS thread so that the read itself allocates nothing.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "runtime/session.h"

namespace flexpipe {

class ReadArgs {
  public:
    ReadArgs(Session* session, std::string path) : session_(session), path_(std::move(path)) {}

    // ranges: Float64Array of [fileOffset, length, arenaOffset] triples; options: undefined or
    // { direct?: boolean, bandwidth?: number (bytes/s, positive and finite), chunkBytes?: number,
    // queueDepth?: number } (io/reader.h ReadGeometry; omitted: its defaults).
    void collect(const Napi::Value& owner, const Napi::Value& ranges, const Napi::Value& options);

    size_t size() const { return ranges_.size(); }
    uint64_t length(size_t i) const { return ranges_[i].length; }
    const ReadOptions& options() const { return options_; }

    // Reads on the calling thread (gate: a pipelined run's waits, runtime/pipeline_gate.h).
    Status execute(ReadGate* gate = nullptr) {
        return session_->read_file(path_, ranges_.data(), ranges_.size(), options_, requests_.data(), &result_, gate);
    }
    // { direct, bytes, ms } of the last execute().
    Napi::Object result(Napi::Env env) const;

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
