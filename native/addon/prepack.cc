// SPDX-License-Identifier: Apache-2.0
// The prepack entry points: look up the transform, size the result, run it into a new array (prepack)
// or only say its shape (prepackShape).
#include "addon/prepack.h"

#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/tensor_arg.h"

namespace flexpipe {

const PrepackEntry* prepack_args(const Napi::Value& name_arg, const Napi::Value& weight, const Napi::Value& ints,
                                 TensorView* w, std::vector<int64_t>* int_values, TensorView* out) {
    Napi::Env env = name_arg.Env();
    const std::string name = string_arg(name_arg, "name");
    const PrepackEntry* entry = find_prepack(name.c_str());
    if (!entry) throw Napi::RangeError::New(env, "name: unknown prepack transform '" + name + "'");
    *w = tensor_arg(weight, "weight");
    if (!w->present()) throw Napi::TypeError::New(env, "weight: expected {dtype, dims, data}");
    *int_values = int_list(ints, "ints");
    Status s = entry->shape(*w, int_values->data(), static_cast<int32_t>(int_values->size()), out);
    if (!s.is_ok()) throw status_to_error(env, s);
    return entry;
}

static Napi::Object shape_object(Napi::Env env, const TensorView& out) {
    Napi::Object result = Napi::Object::New(env);
    result.Set("dtype", Napi::Number::New(env, static_cast<double>(out.dtype)));
    Napi::Array dims = Napi::Array::New(env, static_cast<size_t>(out.rank));
    for (int i = 0; i < out.rank; ++i) dims.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(out.dims[i])));
    result.Set("dims", dims);
    return result;
}

Napi::Value prepack(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    TensorView w, out;
    std::vector<int64_t> ints;
    const PrepackEntry* entry = prepack_args(info[0], info[1], info[2], &w, &ints, &out);
    const size_t bytes = static_cast<size_t>(out.numel) * dtype_size(out.dtype);
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, bytes);
    out.data = buffer.Data();
    Status s = entry->run(w, ints.data(), static_cast<int32_t>(ints.size()), out);
    if (!s.is_ok()) throw status_to_error(env, s);
    Napi::Object result = shape_object(env, out);
    result.Set("data", buffer);
    return result;
}

Napi::Value prepack_shape(const Napi::CallbackInfo& info) {
    TensorView w, out;
    std::vector<int64_t> ints;
    prepack_args(info[0], info[1], info[2], &w, &ints, &out);
    return shape_object(info.Env(), out);
}

}  // namespace flexpipe
