// SPDX-License-Identifier: Apache-2.0
// Parses an ISA name argument of a _testing function and checks this CPU can run it.
#pragma once

#include <napi.h>

#include <string>

#include "runtime/dispatch.h"

namespace flexpipe {

inline Isa isa_arg(const Napi::Value& v) {
    const std::string name = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
    for (Isa isa : all_isas) {
        if (name == isa_name(isa)) {
            if (!isa_supported(isa)) throw Napi::RangeError::New(v.Env(), "isa: " + name + " is not supported here");
            return isa;
        }
    }
    throw Napi::RangeError::New(v.Env(), "isa: expected 'ref', 'avx2', 'avx512' or 'neon', got '" + name + "'");
}

}  // namespace flexpipe
