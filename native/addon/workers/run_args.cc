// SPDX-License-Identifier: Apache-2.0
// Collecting and validating the host buffers, op range and profiling flag of a run.
#include "addon/workers/run_args.h"

#include <cmath>
#include <string>

#include "addon/convert.h"

namespace flexpipe {

void RunArgs::collect_list(const Napi::Value& list, const char* what, std::vector<HostBuffer>* out) {
    Napi::Env env = list.Env();
    if (!list.IsArray()) throw Napi::TypeError::New(env, std::string(what) + ": expected an array of pairs");
    Napi::Array arr = list.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
        Napi::Value pair = arr.Get(i);
        if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2) {
            throw Napi::TypeError::New(env, std::string(what) + ": each entry must be [tensorId, TypedArray]");
        }
        Napi::Array p = pair.As<Napi::Array>();
        HostBuffer b;
        b.tensor = static_cast<int32_t>(integer_arg(p.Get(0u), 0, INT32_MAX, what));
        const ByteView view = typed_array_bytes(p.Get(1u), what);
        b.data = view.data;
        b.bytes = view.bytes;
        pins_.push_back(Napi::Persistent(p.Get(1u).As<Napi::Object>()));
        out->push_back(b);
    }
}

void RunArgs::collect(const Napi::Value& owner, const Napi::Value& inputs, const Napi::Value& outputs) {
    pins_.push_back(Napi::Persistent(owner.As<Napi::Object>()));
    collect_list(inputs, "inputs", &inputs_);
    collect_list(outputs, "outputs", &outputs_);
    Status s = session_->check_io(program_, inputs_.data(), inputs_.size());
    if (s.is_ok()) s = session_->check_io(program_, outputs_.data(), outputs_.size());
    if (!s.is_ok()) throw status_to_error(owner.Env(), s);
}

// An optional op index: undefined -> fallback; otherwise an integer number.
static double op_index(const Napi::Value& v, double fallback, const char* what) {
    if (v.IsUndefined()) return fallback;
    if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected an integer op index");
    const double d = v.As<Napi::Number>().DoubleValue();
    if (d != std::floor(d)) {
        throw Napi::RangeError::New(v.Env(), std::string(what) + ": expected an integer op index, got " + std::to_string(d));
    }
    return d;
}

void RunArgs::set_range(const Napi::Value& op_begin, const Napi::Value& op_end) {
    const auto n = static_cast<double>(session_->op_count(program_));
    const double b = op_index(op_begin, 0, "opBegin"), e = op_index(op_end, n, "opEnd");
    if (!(b >= 0 && b <= e && e <= n)) {
        throw Napi::RangeError::New(op_begin.Env(), "opBegin/opEnd: expected 0 <= opBegin <= opEnd <= " +
                                                        std::to_string(static_cast<long long>(n)) + " (ops of program " +
                                                        std::to_string(program_) + "), got opBegin=" + Napi::Number::New(op_begin.Env(), b).ToString().Utf8Value() +
                                                        ", opEnd=" + Napi::Number::New(op_begin.Env(), e).ToString().Utf8Value());
    }
    op_begin_ = static_cast<size_t>(b);
    op_end_ = static_cast<size_t>(e);
}

void RunArgs::set_profile(const Napi::Value& profile) {
    if (!profile.IsUndefined() && !profile.IsBoolean()) throw Napi::TypeError::New(profile.Env(), "profile: expected a boolean");
    profile_ = profile.IsBoolean() && profile.As<Napi::Boolean>().Value();
    if (profile_) op_ms_.assign(op_end_ - op_begin_, 0.0);
}

Napi::Value RunArgs::op_times(Napi::Env env) const {
    if (!profile_) return env.Undefined();
    Napi::Float64Array times = Napi::Float64Array::New(env, op_ms_.size());
    for (size_t i = 0; i < op_ms_.size(); ++i) times[i] = op_ms_[i];
    return times;
}

}  // namespace flexpipe
