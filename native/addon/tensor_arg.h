// SPDX-License-Identifier: Apache-2.0
// Reading {dtype, dims, data} tensor arguments and integer lists from JS (runOp, prepack, _testing).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "runtime/tensor_view.h"

namespace flexpipe {

// A view of the caller's TypedArray; null/undefined gives an absent tensor. Throws JS errors on
// a bad dtype, more than 8 dims, or a byte length that does not match dims and dtype.
TensorView tensor_arg(const Napi::Value& v, const char* what);
std::vector<TensorView> tensor_list(const Napi::Value& v, const char* what);
std::vector<int64_t> int_list(const Napi::Value& v, const char* what);
std::vector<double> float_list(const Napi::Value& v, const char* what);

}  // namespace flexpipe
