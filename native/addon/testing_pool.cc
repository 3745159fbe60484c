// SPDX-License-Identifier: Apache-2.0
// _testing entry points of the pool family (pooling and Resize):
//   _testing.poolOp(isa, name, inputs, outputs, ints, floats, threads?): runs the op `name` (MaxPool,
//     AveragePool, GlobalAveragePool, GlobalMaxPool, Resize) like runOp, with the row micro-kernels of
//     `isa` ('ref', 'avx2', 'neon'), or with isa 'generic' on the obvious reference kernels only
//     (runtime/ops/nn_pool.h). Outputs are written in place.
//   _testing.resizeWorkspaceBytes(mode, outH, outW, threads): resize_fast_workspace_bytes.
#include <string>

#include "addon/convert.h"
#include "addon/isa_arg.h"
#include "addon/run_op.h"
#include "addon/tensor_arg.h"
#include "addon/testing.h"
#include "runtime/ops/nn_pool.h"
#include "runtime/resize_run.h"

namespace flexpipe {

namespace testing_js {

Napi::Value pool_op(const Napi::CallbackInfo& info) {
    const bool generic = info[0].IsString() && info[0].As<Napi::String>().Utf8Value() == "generic";
    const PoolKernels k = generic ? PoolKernels{} : kernels_for(isa_arg(info[0])).pool;
    const std::string name = string_arg(info[1], "name");
    const JsOpCall js(info, 2);
    const Status s = pool_op_with(name.c_str(), js.call, generic ? nullptr : &k);
    if (!s.is_ok()) throw status_to_error(info.Env(), s);
    return info.Env().Undefined();
}

Napi::Value resize_workspace_bytes(const Napi::CallbackInfo& info) {
    const int64_t mode = integer_arg(info[0], 0, 2, "mode");
    const int64_t out_h = integer_arg(info[1], 0, int64_t{1} << 40, "outH");
    const int64_t out_w = integer_arg(info[2], 0, int64_t{1} << 40, "outW");
    const int64_t threads = integer_arg(info[3], 1, 256, "threads");
    const size_t bytes =
        resize_fast_workspace_bytes(static_cast<ResizeMode>(mode), out_h, out_w, static_cast<int>(threads));
    return Napi::Number::New(info.Env(), static_cast<double>(bytes));
}

}  // namespace testing_js

}  // namespace flexpipe
