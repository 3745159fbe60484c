// SPDX-License-Identifier: Apache-2.0
// prepack(name, tensor, ints): runs a plan-time weight transform (runtime/prepack.h) synchronously.
#pragma once

#include <napi.h>

namespace flexpipe {

// Returns { dtype, dims, data } with data a new Float32Array/Uint8Array/... of the packed weight.
Napi::Value prepack(const Napi::CallbackInfo& info);

}  // namespace flexpipe
