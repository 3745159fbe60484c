// SPDX-License-Identifier: Apache-2.0
// runOp: runs one native operator synchronously on caller-owned arrays (constant folding, op tests).
#pragma once

#include <napi.h>

namespace flexpipe {

// runOp(name, inputs: ({dtype, dims, data} | null)[], outputs: {dtype, dims, data}[], ints, floats, threads)
Napi::Value run_op(const Napi::CallbackInfo& info);

}  // namespace flexpipe
