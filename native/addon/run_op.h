// SPDX-License-Identifier: Apache-2.0
// runOp: runs one native operator synchronously on caller-owned arrays (constant folding, op tests).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "common/non_copyable.h"
#include "runtime/op_call.h"

namespace flexpipe {

// runOp(name, inputs: ({dtype, dims, data} | null)[], outputs: {dtype, dims, data}[], ints, floats, threads)
Napi::Value run_op(const Napi::CallbackInfo& info);

// One op call read from info[at..at+5): inputs, outputs, ints, floats, threads (optional, default 1).
// `call` points into the vectors, so the object is neither copied nor moved.
struct JsOpCall : NonCopyable {
    JsOpCall(const Napi::CallbackInfo& info, int at);

    std::vector<TensorView> ins, outs;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    OpCall call;
};

}  // namespace flexpipe
