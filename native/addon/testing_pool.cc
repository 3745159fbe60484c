// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the pool family (pooling and Resize):
//   _testing.poolOp(isa, name, inputs, outputs, ints, floats, threads?): runs the op `name` (MaxPool,
//     AveragePool, GlobalAveragePool, GlobalMaxPool, Resize) like runOp, with the row micro-kernels of
//     `isa` ('ref', 'avx2', 'neon'), or with isa 'generic' on the obvious reference kernels only
//     (runtime/ops/nn_pool.h). Outputs are written in place.
//   _testing.resizeWorkspaceBytes(mode, outH, outW, threads): resize_fast_workspace_bytes.
#include <string>
#include <vector>

#include "addon/convert.h"
#include "addon/isa_arg.h"
#include "addon/tensor_arg.h"
#include "addon/testing.h"
#include "runtime/ops/nn_pool.h"
#include "runtime/resize_run.h"

namespace flexpipe {

namespace {

Napi::Value pool_op(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const bool generic = info[0].IsString() && info[0].As<Napi::String>().Utf8Value() == "generic";
    const PoolKernels k = generic ? PoolKernels{} : kernels_for(isa_arg(info[0])).pool;
    if (!info[1].IsString()) throw Napi::TypeError::New(env, "name: expected a string");
    const std::string name = info[1].As<Napi::String>().Utf8Value();
    const std::vector<TensorView> ins = tensor_list(info[2], "inputs");
    const std::vector<TensorView> outs = tensor_list(info[3], "outputs");
    const std::vector<int64_t> ints = int_list(info[4], "ints");
    const std::vector<double> floats = float_list(info[5], "floats");
    OpCall call;
    call.in = ins.data();
    call.n_in = static_cast<int32_t>(ins.size());
    call.out = outs.data();
    call.n_out = static_cast<int32_t>(outs.size());
    call.ints = ints.data();
    call.n_ints = static_cast<int32_t>(ints.size());
    call.floats = floats.data();
    call.n_floats = static_cast<int32_t>(floats.size());
    call.threads = info[6].IsNumber() ? static_cast<int32_t>(integer_arg(info[6], 1, 256, "threads")) : 1;
    const Status s = pool_op_with(name.c_str(), call, generic ? nullptr : &k);
    if (!s.is_ok()) throw status_to_error(env, s);
    return env.Undefined();
}

Napi::Value resize_workspace(const Napi::CallbackInfo& info) {
    const int64_t mode = integer_arg(info[0], 0, 2, "mode");
    const int64_t out_h = integer_arg(info[1], 0, int64_t{1} << 40, "outH");
    const int64_t out_w = integer_arg(info[2], 0, int64_t{1} << 40, "outW");
    const int64_t threads = integer_arg(info[3], 1, 256, "threads");
    const size_t bytes =
        resize_fast_workspace_bytes(static_cast<ResizeMode>(mode), out_h, out_w, static_cast<int>(threads));
    return Napi::Number::New(info.Env(), static_cast<double>(bytes));
}

}  // namespace

void add_pool_testing(Napi::Env env, Napi::Object testing) {
    testing.Set("poolOp", Napi::Function::New(env, pool_op));
    testing.Set("resizeWorkspaceBytes", Napi::Function::New(env, resize_workspace));
}

}  // namespace flexpipe
