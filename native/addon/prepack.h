// SPDX-License-Identifier: Apache-2.0
// prepack(name, tensor, ints): runs a plan-time weight transform (runtime/prepack.h) synchronously;
// prepackShape says what it would return (an engine reserves the arena for writeBatch with it).
#pragma once

#include <napi.h>

namespace flexpipe {

// Returns { dtype, dims, data } with data a new Float32Array/Uint8Array/... of the packed weight.
Napi::Value prepack(const Napi::CallbackInfo& info);

// prepackShape(name, tensor, ints) -> { dtype, dims } of prepack's result, without running it.
Napi::Value prepack_shape(const Napi::CallbackInfo& info);

}  // namespace flexpipe
