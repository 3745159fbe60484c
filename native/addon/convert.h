// SPDX-License-Identifier: Apache-2.0
// Conversions at the N-API boundary: TypedArray views, Status -> JS errors, argument checks.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace flexpipe {

// A JS Error whose `code` is ERR_FLEXPIPE_<STATUS NAME>, e.g. ERR_FLEXPIPE_INVALID_ARGUMENT.
Napi::Error status_to_error(Napi::Env env, const Status& status);
std::string status_error_code(StatusCode code);

// Throws a JS TypeError unless v is a TypedArray; returns its bytes.
struct ByteView {
    uint8_t* data = nullptr;
    size_t bytes = 0;
};
ByteView typed_array_bytes(const Napi::Value& v, const char* what);

// The largest arena offset or size JS may pass (2^52: exact in a double, far beyond any arena).
constexpr int64_t max_arena_offset = int64_t{1} << 52;

// Throws a JS TypeError/RangeError unless v is an integer number in [lo, hi].
int64_t integer_arg(const Napi::Value& v, int64_t lo, int64_t hi, const char* what);

// Throws a JS TypeError unless v is a string; returns it.
std::string string_arg(const Napi::Value& v, const char* what);

// o[name] as an integer, or fallback when it is undefined; throws a JS TypeError unless it is a number.
int64_t int_field(const Napi::Object& o, const char* name, int64_t fallback);

}  // namespace flexpipe
