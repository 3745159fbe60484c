// SPDX-License-Identifier: Apache-2.0
// The prepack entry point: looks up the transform, sizes the result, runs it into a new array.
#include "addon/prepack.h"

#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/tensor_arg.h"
#include "runtime/prepack.h"

namespace flexpipe {

Napi::Value prepack(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const std::string name = string_arg(info[0], "name");
    const PrepackEntry* entry = find_prepack(name.c_str());
    if (!entry) throw Napi::RangeError::New(env, "name: unknown prepack transform '" + name + "'");
    const TensorView w = tensor_arg(info[1], "weight");
    if (!w.present()) throw Napi::TypeError::New(env, "weight: expected {dtype, dims, data}");
    const std::vector<int64_t> ints = int_list(info[2], "ints");
    TensorView out;
    Status s = entry->shape(w, ints.data(), static_cast<int32_t>(ints.size()), &out);
    if (!s.is_ok()) throw status_to_error(env, s);
    const size_t bytes = static_cast<size_t>(out.numel) * dtype_size(out.dtype);
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, bytes);
    out.data = buffer.Data();
    s = entry->run(w, ints.data(), static_cast<int32_t>(ints.size()), out);
    if (!s.is_ok()) throw status_to_error(env, s);
    Napi::Object result = Napi::Object::New(env);
    result.Set("dtype", Napi::Number::New(env, static_cast<double>(out.dtype)));
    Napi::Array dims = Napi::Array::New(env, static_cast<size_t>(out.rank));
    for (int i = 0; i < out.rank; ++i) dims.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(out.dims[i])));
    result.Set("dims", dims);
    result.Set("data", buffer);
    return result;
}

}  // namespace flexpipe
