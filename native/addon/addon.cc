// SPDX-License-Identifier: Apache-2.0
// Module initialisation and the export table; nothing else.
#include <napi.h>

#include "addon/info.h"
#include "addon/map_file.h"
#include "addon/prepack.h"
#include "addon/outlier_quantize.h"
#include "addon/run_op.h"
#include "addon/session_wrap.h"
#include "addon/testing.h"
#include "alloc/alloc_audit.h"

namespace flexpipe {

Napi::Object init(Napi::Env env, Napi::Object exports) {
    alloc_audit_ignore_this_thread();  // the JS thread: its allocations are never the inference path's
    exports.Set("Session", SessionWrap::define(env));
    exports.Set("info", Napi::Function::New(env, info));
    exports.Set("opNames", Napi::Function::New(env, op_names));
    exports.Set("runOp", Napi::Function::New(env, run_op));
    exports.Set("prepack", Napi::Function::New(env, prepack));
    exports.Set("prepackShape", Napi::Function::New(env, prepack_shape));
    exports.Set("mapFile", Napi::Function::New(env, map_file));
    exports.Set("unmapFile", Napi::Function::New(env, unmap_file));
    exports.Set("quantizeLayer", Napi::Function::New(env, quantize_layer));
    exports.Set("_testing", make_testing(env));
    return exports;
}

}  // namespace flexpipe

static Napi::Object init_module(Napi::Env env, Napi::Object exports) { return flexpipe::init(env, exports); }

NODE_API_MODULE(flexpipe, init_module)
