// SPDX-License-Identifier: Apache-2.0
// `_testing`: entry points for tests only — run one kernel variant of a family on a named ISA.
//
// Every family adds its functions to the object (testing_<family>.cc). Convention: a function
// takes the ISA name ('ref', 'avx2', 'neon') first and throws a RangeError for an ISA this CPU
// or build cannot run; `_testing.isas()` lists the ISAs available here.
#pragma once

#include <napi.h>

namespace flexpipe {

Napi::Object make_testing(Napi::Env env);

void add_gemm_testing(Napi::Env env, Napi::Object testing);
void add_conv_testing(Napi::Env env, Napi::Object testing);
void add_xf_testing(Napi::Env env, Napi::Object testing);
void add_pool_testing(Napi::Env env, Napi::Object testing);
void add_alloc_testing(Napi::Env env, Napi::Object testing);
void add_quant_testing(Napi::Env env, Napi::Object testing);

}  // namespace flexpipe
