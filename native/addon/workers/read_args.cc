// SPDX-License-Identifier: Apache-2.0
// Decoding the range list and options of a file read; the result object.
#include "addon/workers/read_args.h"

#include <cmath>

namespace flexpipe {

void ReadArgs::collect(const Napi::Value& owner, const Napi::Value& ranges, const Napi::Value& options) {
    owner_ = Napi::Persistent(owner.As<Napi::Object>());
    Napi::Env env = ranges.Env();
    if (!ranges.IsTypedArray() || ranges.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
        throw Napi::TypeError::New(env, "ranges: expected a Float64Array of [fileOffset, length, arenaOffset]");
    }
    Napi::Float64Array a = ranges.As<Napi::Float64Array>();
    if (a.ElementLength() % 3 != 0) throw Napi::RangeError::New(env, "ranges: length must be a multiple of 3");
    for (size_t i = 0; i < a.ElementLength(); i += 3) {
        for (size_t k = 0; k < 3; ++k) {
            const double v = a[i + k];
            if (!(v >= 0 && v <= 4503599627370496.0) || v != std::floor(v)) {
                throw Napi::RangeError::New(env, "ranges: offsets and lengths must be non-negative integers");
            }
        }
        ranges_.push_back({static_cast<uint64_t>(a[i]), static_cast<uint64_t>(a[i + 1]), static_cast<uint64_t>(a[i + 2])});
    }
    requests_.resize(ranges_.size());
    collect_options(options);
}

void ReadArgs::collect_options(const Napi::Value& options) {
    Napi::Env env = options.Env();
    if (options.IsUndefined() || options.IsNull()) return;
    if (!options.IsObject()) throw Napi::TypeError::New(env, "options: expected an object { direct?, bandwidth?, chunkBytes?, queueDepth? }");
    Napi::Object o = options.As<Napi::Object>();
    const Napi::Value direct = o.Get("direct");
    if (!direct.IsUndefined()) {
        if (!direct.IsBoolean()) throw Napi::TypeError::New(env, "options.direct: expected a boolean");
        options_.direct = direct.As<Napi::Boolean>().Value();
    }
    const Napi::Value bandwidth = o.Get("bandwidth");
    if (!bandwidth.IsUndefined()) {
        const double bw = bandwidth.IsNumber() ? bandwidth.As<Napi::Number>().DoubleValue() : 0;
        if (!bandwidth.IsNumber() || !(bw > 0) || !std::isfinite(bw)) {
            throw Napi::RangeError::New(env, "options.bandwidth: expected a positive finite number of bytes per second, got " +
                                                 bandwidth.ToString().Utf8Value());
        }
        options_.bandwidth = bw;
    }
    const Napi::Value chunk = o.Get("chunkBytes");
    if (!chunk.IsUndefined()) {
        const double c = chunk.IsNumber() ? chunk.As<Napi::Number>().DoubleValue() : 0;
        if (!(c >= ReadGeometry::min_chunk_bytes && c <= ReadGeometry::max_chunk_bytes) || std::fmod(c, 4096) != 0) {
            throw Napi::RangeError::New(env, "options.chunkBytes: expected a multiple of 4096 from 4096 to " +
                                                 std::to_string(ReadGeometry::max_chunk_bytes) + ", got " +
                                                 chunk.ToString().Utf8Value());
        }
        options_.geometry.chunk_bytes = static_cast<uint64_t>(c);
    }
    const Napi::Value depth = o.Get("queueDepth");
    if (!depth.IsUndefined()) {
        const double d = depth.IsNumber() ? depth.As<Napi::Number>().DoubleValue() : 0;
        if (!(d >= 1 && d <= ReadGeometry::max_queue_depth) || d != std::floor(d)) {
            throw Napi::RangeError::New(env, "options.queueDepth: expected an integer from 1 to " +
                                                 std::to_string(ReadGeometry::max_queue_depth) + ", got " +
                                                 depth.ToString().Utf8Value());
        }
        options_.geometry.queue_depth = static_cast<int>(d);
    }
}

Napi::Object ReadArgs::result(Napi::Env env) const {
    Napi::Object o = Napi::Object::New(env);
    o.Set("direct", Napi::Boolean::New(env, result_.direct));
    o.Set("bytes", Napi::Number::New(env, static_cast<double>(result_.bytes)));
    o.Set("ms", Napi::Number::New(env, result_.ms));
    return o;
}

}  // namespace flexpipe
