// SPDX-License-Identifier: Apache-2.0
// A single operator call outside any program: tensors are views of the caller's TypedArrays.
#include "addon/run_op.h"

#include <string>
#include <vector>

#include "addon/convert.h"
#include "runtime/op_registry.h"

namespace flexpipe {
namespace {

TensorView tensor_arg(const Napi::Value& v, const char* what) {
    Napi::Env env = v.Env();
    TensorView t;
    if (v.IsNull() || v.IsUndefined()) return t;  // absent optional input
    if (!v.IsObject()) throw Napi::TypeError::New(env, std::string(what) + ": expected {dtype, dims, data}");
    Napi::Object o = v.As<Napi::Object>();
    const int64_t dtype = integer_arg(o.Get("dtype"), 1, 13, what);
    if (!dtype_valid(static_cast<int32_t>(dtype))) throw Napi::RangeError::New(env, std::string(what) + ": bad dtype");
    t.dtype = static_cast<DType>(dtype);
    Napi::Value dims = o.Get("dims");
    if (!dims.IsArray() || dims.As<Napi::Array>().Length() > static_cast<uint32_t>(max_rank)) {
        throw Napi::TypeError::New(env, std::string(what) + ": dims must be an array of at most 8 numbers");
    }
    Napi::Array d = dims.As<Napi::Array>();
    t.rank = static_cast<int32_t>(d.Length());
    t.numel = 1;
    for (uint32_t i = 0; i < d.Length(); ++i) {
        t.dims[i] = integer_arg(d.Get(i), 0, int64_t{1} << 40, what);
        t.numel *= t.dims[i];
    }
    const ByteView bytes = typed_array_bytes(o.Get("data"), what);
    if (bytes.bytes != static_cast<size_t>(t.numel) * dtype_size(t.dtype)) {
        throw Napi::RangeError::New(env, std::string(what) + ": data has " + std::to_string(bytes.bytes) +
                                             " bytes, dims and dtype need " +
                                             std::to_string(static_cast<size_t>(t.numel) * dtype_size(t.dtype)));
    }
    t.data = bytes.data;
    return t;
}

std::vector<TensorView> tensor_list(const Napi::Value& v, const char* what) {
    if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected an array");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<TensorView> out;
    for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(tensor_arg(a.Get(i), what));
    return out;
}

}  // namespace

Napi::Value run_op(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) throw Napi::TypeError::New(env, "name: expected a string");
    const std::string name = info[0].As<Napi::String>().Utf8Value();
    const OpEntry* entry = nullptr;
    for (const OpEntry& e : op_table())
        if (name == e.name) entry = &e;
    if (!entry) throw Napi::RangeError::New(env, "name: unknown native op '" + name + "'");
    const std::vector<TensorView> ins = tensor_list(info[1], "inputs");
    const std::vector<TensorView> outs = tensor_list(info[2], "outputs");
    std::vector<int64_t> ints;
    std::vector<double> floats;
    if (!info[3].IsArray() || !info[4].IsArray()) throw Napi::TypeError::New(env, "ints, floats: expected arrays");
    Napi::Array ia = info[3].As<Napi::Array>(), fa = info[4].As<Napi::Array>();
    for (uint32_t i = 0; i < ia.Length(); ++i) ints.push_back(integer_arg(ia.Get(i), INT64_MIN / 2, INT64_MAX / 2, "ints"));
    for (uint32_t i = 0; i < fa.Length(); ++i) {
        if (!fa.Get(i).IsNumber()) throw Napi::TypeError::New(env, "floats: expected numbers");
        floats.push_back(fa.Get(i).As<Napi::Number>().DoubleValue());
    }
    OpCall call;
    call.in = ins.data();
    call.n_in = static_cast<int32_t>(ins.size());
    call.out = outs.data();
    call.n_out = static_cast<int32_t>(outs.size());
    call.ints = ints.data();
    call.n_ints = static_cast<int32_t>(ints.size());
    call.floats = floats.data();
    call.n_floats = static_cast<int32_t>(floats.size());
    call.threads = info[5].IsNumber() ? static_cast<int32_t>(integer_arg(info[5], 1, 256, "threads")) : 1;
    const Status s = entry->fn(call);
    if (!s.is_ok()) throw status_to_error(env, s);
    return env.Undefined();
}

}  // namespace flexpipe
