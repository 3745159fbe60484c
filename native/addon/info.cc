// SPDX-License-Identifier: Apache-2.0
// Reports the build (arch, ISA, OpenMP, io backends) and the native operator table.
#include "addon/info.h"

#include <string>

#include "io/reader.h"
#include "runtime/cpu_features.h"
#include "runtime/op_registry.h"
#include "runtime/parallel.h"

namespace flexpipe {

Napi::Value info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    const CpuFeatures cpu = detect_cpu();
    o.Set("arch", Napi::String::New(env, cpu.arch));
    o.Set("isa", Napi::String::New(env, isa_name(selected_isa())));
    o.Set("cpuFeatures", Napi::String::New(env, cpu_features_string(cpu)));
    o.Set("openmp", Napi::Boolean::New(env, openmp_enabled()));
    o.Set("maxThreads", Napi::Number::New(env, max_threads()));
#ifdef FLEXPIPE_HAVE_LIBURING
    o.Set("liburing", Napi::Boolean::New(env, true));
#else
    o.Set("liburing", Napi::Boolean::New(env, false));
#endif
    std::string why;
    auto uring = make_uring_reader(&why);
    o.Set("ioUring", Napi::String::New(env, uring ? "available" : "unavailable: " + why));
    return o;
}

Napi::Value op_names(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto& table = op_table();
    Napi::Array names = Napi::Array::New(env, table.size());
    for (size_t i = 0; i < table.size(); ++i) names.Set(static_cast<uint32_t>(i), Napi::String::New(env, table[i].name));
    return names;
}

}  // namespace flexpipe
