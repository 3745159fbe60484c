// SPDX-License-Identifier: Apache-2.0
// Status codes: everything below native/addon returns these; no C++ exception crosses that line.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace flexpipe {

enum class StatusCode : int32_t {
    ok = 0,
    invalid_argument,
    shape_mismatch,
    unsupported,
    out_of_memory,
    io,
    cancelled,
    internal,
};

// A code plus a message. The message is only built on the error path, so returning Status::ok()
// never allocates (the inference path stays malloc-free).
class Status {
  public:
    Status() = default;
    static Status ok() { return Status(); }

    // printf-style message: "failed to <verb> <object>: <reason> (<name>=<value>, ...)".
    static Status error(StatusCode code, const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        Status s;
        s.code_ = code;
        char buf[512];
        va_list args;
        va_start(args, fmt);
        vsnprintf(buf, sizeof(buf), fmt, args);
        va_end(args);
        s.message_ = buf;
        return s;
    }

    bool is_ok() const { return code_ == StatusCode::ok; }
    StatusCode code() const { return code_; }
    const std::string& message() const { return message_; }

  private:
    StatusCode code_ = StatusCode::ok;
    std::string message_;
};

const char* status_code_name(StatusCode code);

}  // namespace flexpipe

#define FLEXPIPE_RETURN_IF_ERROR(expr)              \
    do {                                            \
        ::flexpipe::Status status_ = (expr);        \
        if (!status_.is_ok()) return status_;       \
    } while (0)

// Argument check inside an op or runtime function: returns invalid_argument with a message.
#define FLEXPIPE_CHECK_ARG(cond, ...)                                                        \
    do {                                                                                     \
        if (!(cond)) return ::flexpipe::Status::error(::flexpipe::StatusCode::invalid_argument, __VA_ARGS__); \
    } while (0)
