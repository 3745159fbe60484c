// SPDX-License-Identifier: Apache-2.0
// info() and opNames(): what this binary is and can do, for bug reports and the TS encoder.
#pragma once

#include <napi.h>

namespace flexpipe {

Napi::Value info(const Napi::CallbackInfo& info);
Napi::Value op_names(const Napi::CallbackInfo& info);

}  // namespace flexpipe
