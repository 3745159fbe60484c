// SPDX-License-Identifier: Apache-2.0
// Builds the `_testing` export from the families' test entry points.
#include "addon/testing.h"

#include "runtime/dispatch.h"

namespace flexpipe {

static Napi::Value isas(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array out = Napi::Array::New(env);
    uint32_t n = 0;
    for (Isa isa : all_isas)
        if (isa_supported(isa)) out.Set(n++, Napi::String::New(env, isa_name(isa)));
    return out;
}

Napi::Object make_testing(Napi::Env env) {
    Napi::Object testing = Napi::Object::New(env);
    testing.Set("isas", Napi::Function::New(env, isas));
    add_gemm_testing(env, testing);
    add_conv_testing(env, testing);
    add_xf_testing(env, testing);
    add_pool_testing(env, testing);
    add_alloc_testing(env, testing);
    add_quant_testing(env, testing);
    return testing;
}

}  // namespace flexpipe
