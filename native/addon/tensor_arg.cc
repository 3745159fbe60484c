// SPDX-License-Identifier: Apache-2.0
// Tensor and list arguments from JS, shared by runOp, prepack and the _testing entry points.
#include "addon/tensor_arg.h"

#include <string>

#include "addon/convert.h"
#include "common/dtype.h"

namespace flexpipe {

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


std::vector<int64_t> int_list(const Napi::Value& v, const char* what) {
    if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected an array of integers");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<int64_t> out;
    for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(integer_arg(a.Get(i), INT64_MIN / 2, INT64_MAX / 2, what));
    return out;
}

std::vector<double> float_list(const Napi::Value& v, const char* what) {
    if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected an array of numbers");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<double> out;
    for (uint32_t i = 0; i < a.Length(); ++i) {
        if (!a.Get(i).IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(what) + ": expected numbers");
        out.push_back(a.Get(i).As<Napi::Number>().DoubleValue());
    }
    return out;
}

}  // namespace flexpipe
