// SPDX-License-Identifier: Apache-2.0
// Boundary conversions shared by every N-API entry point.
#include "addon/convert.h"

#include <cctype>
#include <cmath>

namespace flexpipe {

std::string status_error_code(StatusCode code) {
    std::string name = status_code_name(code);
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return "ERR_FLEXPIPE_" + name;
}

Napi::Error status_to_error(Napi::Env env, const Status& status) {
    Napi::Error err = Napi::Error::New(env, status.message());
    err.Set("code", Napi::String::New(env, status_error_code(status.code())));
    return err;
}

ByteView typed_array_bytes(const Napi::Value& v, const char* what) {
    if (!v.IsTypedArray()) {
        throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected a TypedArray");
    }
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    Napi::ArrayBuffer buffer = ta.ArrayBuffer();
    ByteView out;
    out.data = static_cast<uint8_t*>(buffer.Data()) + ta.ByteOffset();
    out.bytes = ta.ByteLength();
    return out;
}

int64_t integer_arg(const Napi::Value& v, int64_t lo, int64_t hi, const char* what) {
    if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected a number");
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d)) {
        throw Napi::RangeError::New(v.Env(), std::string(what) + ": expected an integer in range, got " +
                                                 std::to_string(d));
    }
    return static_cast<int64_t>(d);
}

std::string string_arg(const Napi::Value& v, const char* what) {
    if (!v.IsString()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected a string");
    return v.As<Napi::String>().Utf8Value();
}

int64_t int_field(const Napi::Object& o, const char* name, int64_t fallback) {
    const Napi::Value v = o.Get(name);
    if (v.IsUndefined()) return fallback;
    if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(name) + ": expected a number");
    return v.As<Napi::Number>().Int64Value();
}

}  // namespace flexpipe
