// SPDX-License-Identifier: Apache-2.0
// A single operator call outside any program: tensors are views of the caller's TypedArrays.
#include "addon/run_op.h"

#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/tensor_arg.h"
#include "runtime/op_registry.h"

namespace flexpipe {

Napi::Value run_op(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) throw Napi::TypeError::New(env, "name: expected a string");
    const std::string name = info[0].As<Napi::String>().Utf8Value();
    const OpEntry* entry = nullptr;
    for (const OpEntry& e : op_table())
        if (name == e.name) entry = &e;
    if (!entry) throw Napi::RangeError::New(env, "name: unknown native op '" + name + "'");
    const std::vector<TensorView> ins = tensor_list(info[1], "inputs");
    const std::vector<TensorView> outs = tensor_list(info[2], "outputs");
    const std::vector<int64_t> ints = int_list(info[3], "ints");
    const std::vector<double> floats = float_list(info[4], "floats");
    OpCall call;
    call.in = ins.data();
    call.n_in = static_cast<int32_t>(ins.size());
    call.out = outs.data();
    call.n_out = static_cast<int32_t>(outs.size());
    call.ints = ints.data();
    call.n_ints = static_cast<int32_t>(ints.size());
    call.floats = floats.data();
    call.n_floats = static_cast<int32_t>(floats.size());
    call.threads = info[5].IsNumber() ? static_cast<int32_t>(integer_arg(info[5], 1, 256, "threads")) : 1;
    const Status s = entry->fn(call);
    if (!s.is_ok()) throw status_to_error(env, s);
    return env.Undefined();
}

}  // namespace flexpipe
