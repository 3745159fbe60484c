// SPDX-License-Identifier: Apache-2.0
// The quantizeLayer entry point: checks arguments, fits on the layer in place, writes the blobs straight
// into new JS Uint8Arrays.
#include "addon/outlier_quantize.h"

#include <cmath>
#include <new>
#include <string>
#include <vector>

#include "addon/convert.h"
#include "runtime/parallel.h"
#include "runtime/quant/outlier_quantize.h"

namespace flexpipe {

namespace {

OutlierQuantizeOptions quantize_options(const Napi::CallbackInfo& info) {
    OutlierQuantizeOptions o;
    o.shards = static_cast<int>(integer_arg(info[1], 1, 1 << 20, "shardCount"));
    o.bits = static_cast<int>(integer_arg(info[2], 2, 8, "bits"));
    if (!info[3].IsUndefined()) {
        if (!info[3].IsNumber()) throw Napi::TypeError::New(info.Env(), "threshold: expected a number");
        o.threshold = info[3].As<Napi::Number>().DoubleValue();
        if (!std::isfinite(o.threshold))
            throw Napi::RangeError::New(
                info.Env(), "threshold: expected a finite number, got " + std::to_string(o.threshold));
    }
    o.threads = max_threads();
    return o;
}

Napi::Value quantize(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw Napi::TypeError::New(env, "layer: expected a Float32Array");
    Napi::Float32Array layer = info[0].As<Napi::Float32Array>();
    const OutlierQuantizeOptions o = quantize_options(info);
    const size_t n = layer.ElementLength();
    if (n == 0 || n % static_cast<size_t>(o.shards) != 0)
        throw Napi::RangeError::New(
            env, "layer: length must be a positive multiple of shardCount (length=" + std::to_string(n) +
                     ", shardCount=" + std::to_string(o.shards) + ")");
    OutlierQuantizer q;
    const Status s = q.fit(layer.Data(), static_cast<int64_t>(n), o);
    if (!s.is_ok()) {
        if (s.code() == StatusCode::invalid_argument) throw Napi::RangeError::New(env, s.message());
        throw status_to_error(env, s);
    }
    Napi::Array blobs = Napi::Array::New(env, static_cast<size_t>(o.shards));
    std::vector<uint8_t*> data(static_cast<size_t>(o.shards));
    for (int i = 0; i < o.shards; ++i) {
        Napi::Uint8Array blob = Napi::Uint8Array::New(env, static_cast<size_t>(q.shard_bytes(i)));
        data[static_cast<size_t>(i)] = blob.Data();
        blobs.Set(static_cast<uint32_t>(i), blob);
    }
    q.write_blobs(data.data());
    Napi::Float32Array centroids = Napi::Float32Array::New(env, size_t{1} << o.bits);
    for (size_t c = 0; c < centroids.ElementLength(); ++c) centroids[c] = q.centroids()[c];
    Napi::Object result = Napi::Object::New(env);
    result.Set("blobs", blobs);
    result.Set("mean", Napi::Number::New(env, q.mean()));
    result.Set("std", Napi::Number::New(env, q.stddev()));
    result.Set("outliers", Napi::Number::New(env, static_cast<double>(q.outliers())));
    result.Set("centroids", centroids);
    return result;
}

}  // namespace

Napi::Value quantize_layer(const Napi::CallbackInfo& info) {
    try {
        return quantize(info);
    } catch (const std::bad_alloc&) {  // the std::vector above; Napi::Error passes through to JS
        throw Napi::Error::New(info.Env(), "failed to quantize layer: out of memory");
    }
}

}  // namespace flexpipe
