// SPDX-License-Identifier: Apache-2.0
// Decoding the range list of a file read.
#include "addon/workers/read_worker.h"

#include <cmath>

namespace flexpipe {

void ReadWorker::collect(const Napi::Value& owner, const Napi::Value& ranges) {
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
}

}  // namespace flexpipe
