// SPDX-License-Identifier: Apache-2.0
// _testing entry point of the dequant kernel family (lengths are checked, so a bad call throws instead
// of touching memory):
//   _testing.dequant(isa, packed: Uint8Array, bits, centroids: Float32Array, begin, end, out: Float32Array)
//     runs the dequant_f32 variant of `isa` on weights [begin, end) into out[0 .. end - begin).
#include <cstdint>
#include <string>

#include "addon/convert.h"
#include "addon/isa_arg.h"
#include "addon/testing.h"
#include "runtime/dispatch.h"

namespace flexpipe {

namespace testing_js {

Napi::Value dequant(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const KernelTable t = kernels_for(isa_arg(info[0]));
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw Napi::TypeError::New(env, "packed: expected a Uint8Array");
    if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(env, "centroids: expected a Float32Array");
    if (!info[6].IsTypedArray() || info[6].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(env, "out: expected a Float32Array");
    const int bits = static_cast<int>(integer_arg(info[2], 2, 8, "bits"));
    const int64_t begin = integer_arg(info[4], 0, int64_t{1} << 40, "begin");
    const int64_t end = integer_arg(info[5], begin, int64_t{1} << 40, "end");
    Napi::Uint8Array packed = info[1].As<Napi::Uint8Array>();
    Napi::Float32Array centroids = info[3].As<Napi::Float32Array>();
    Napi::Float32Array out = info[6].As<Napi::Float32Array>();
    if (static_cast<int64_t>(packed.ByteLength()) < (end * bits + 7) / 8)
        throw Napi::RangeError::New(
            env, "packed: too short for end (need " + std::to_string((end * bits + 7) / 8) + " bytes)");
    if (centroids.ElementLength() < (size_t{1} << bits))
        throw Napi::RangeError::New(env, "centroids: need 1 << bits values");
    if (static_cast<int64_t>(out.ElementLength()) < end - begin)
        throw Napi::RangeError::New(env, "out: too short (need end - begin values)");
    t.quant.dequant_f32(packed.Data(), bits, centroids.Data(), begin, end, out.Data());
    return env.Undefined();
}

}  // namespace testing_js

}  // namespace flexpipe
