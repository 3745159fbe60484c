// SPDX-License-Identifier: Apache-2.0
// A single operator call outside any program: tensors are views of the caller's TypedArrays.
#include "addon/run_op.h"

#include <string>

#include "addon/convert.h"
#include "addon/tensor_arg.h"
#include "runtime/op_registry.h"

namespace flexpipe {

JsOpCall::JsOpCall(const Napi::CallbackInfo& info, int at)
    : ins(tensor_list(info[at], "inputs")),
      outs(tensor_list(info[at + 1], "outputs")),
      ints(int_list(info[at + 2], "ints")),
      floats(float_list(info[at + 3], "floats")) {
    call.in = ins.data();
    call.n_in = static_cast<int32_t>(ins.size());
    call.out = outs.data();
    call.n_out = static_cast<int32_t>(outs.size());
    call.ints = ints.data();
    call.n_ints = static_cast<int32_t>(ints.size());
    call.floats = floats.data();
    call.n_floats = static_cast<int32_t>(floats.size());
    call.threads = info[at + 4].IsNumber() ? static_cast<int32_t>(integer_arg(info[at + 4], 1, 256, "threads")) : 1;
}

Napi::Value run_op(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const std::string name = string_arg(info[0], "name");
    const OpEntry* entry = find_op(name.c_str());
    if (!entry) throw Napi::RangeError::New(env, "name: unknown native op '" + name + "'");
    const JsOpCall js(info, 1);
    const Status s = call_op(*entry, js.call);
    if (!s.is_ok()) throw status_to_error(env, s);
    return env.Undefined();
}

}  // namespace flexpipe
