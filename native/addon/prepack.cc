// SPDX-License-Identifier: Apache-2.0
// The prepack entry points: look up the transform, size the result, run it into a new array (prepack)
// or only say its shape (prepackShape).
#include "addon/prepack.h"

#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/tensor_arg.h"
#include "runtime/prepack.h"

namespace flexpipe {

// The transform, weight and ints of a call (name, tensor, ints), and its result's shape in *out.
static const PrepackEntry* transform_args(const Napi::CallbackInfo& info, TensorView* w, std::vector<int64_t>* ints,
                                          TensorView* out) {
    Napi::Env env = info.Env();
    const std::string name = string_arg(info[0], "name");
    const PrepackEntry* entry = find_prepack(name.c_str());
    if (!entry) throw Napi::RangeError::New(env, "name: unknown prepack transform '" + name + "'");
    *w = tensor_arg(info[1], "weight");
    if (!w->present()) throw Napi::TypeError::New(env, "weight: expected {dtype, dims, data}");
    *ints = int_list(info[2], "ints");
    Status s = entry->shape(*w, ints->data(), static_cast<int32_t>(ints->size()), out);
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
    const PrepackEntry* entry = transform_args(info, &w, &ints, &out);
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
    transform_args(info, &w, &ints, &out);
    return shape_object(info.Env(), out);
}

}  // namespace flexpipe
