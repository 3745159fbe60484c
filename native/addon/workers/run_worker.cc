// SPDX-License-Identifier: Apache-2.0
// Collecting and validating the host buffers of a run.
#include "addon/workers/run_worker.h"

#include <string>

#include "addon/convert.h"

namespace flexpipe {

void RunWorker::collect_list(const Napi::Value& list, const char* what, std::vector<HostBuffer>* out) {
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

void RunWorker::collect(const Napi::Value& owner, const Napi::Value& inputs, const Napi::Value& outputs) {
    pins_.push_back(Napi::Persistent(owner.As<Napi::Object>()));
    collect_list(inputs, "inputs", &inputs_);
    collect_list(outputs, "outputs", &outputs_);
    Status s = session_->check_io(program_, inputs_.data(), inputs_.size());
    if (s.is_ok()) s = session_->check_io(program_, outputs_.data(), outputs_.size());
    if (!s.is_ok()) throw status_to_error(owner.Env(), s);
}

}  // namespace flexpipe
