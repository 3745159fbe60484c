// SPDX-License-Identifier: Apache-2.0
// prepack(name, tensor, ints): runs a plan-time weight transform (runtime/prepack.h) synchronously;
// prepackShape says what it would return (an engine reserves the arena for writeBatch with it).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "runtime/prepack.h"

namespace flexpipe {

// The checked arguments of a transform from JS: its name, the weight {dtype, dims, data} and its ints;
// *out gets the result's shape (data unset). Throws a JS RangeError / TypeError or the transform's
// coded error. Shared by prepack, prepackShape and writeBatch's transform jobs.
const PrepackEntry* prepack_args(const Napi::Value& name, const Napi::Value& weight, const Napi::Value& ints,
                                 TensorView* w, std::vector<int64_t>* int_values, TensorView* out);

// Returns { dtype, dims, data } with data a new Float32Array/Uint8Array/... of the packed weight.
Napi::Value prepack(const Napi::CallbackInfo& info);

// prepackShape(name, tensor, ints) -> { dtype, dims } of prepack's result, without running it.
Napi::Value prepack_shape(const Napi::CallbackInfo& info);

}  // namespace flexpipe
