// SPDX-License-Identifier: Apache-2.0
// The table of native operators: name -> function. Op codes are indices into this table; the
// TypeScript encoder asks the addon for the table (binding.opNames()) and never hard-codes codes.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/op_call.h"

namespace flexpipe {

struct OpEntry {
    const char* name;
    OpFn fn;
};

// Filled once on first use; read-only afterwards, so it is safe from any thread.
const std::vector<OpEntry>& op_table();

// Each op group appends its entries; op_table() calls all of them (runtime/op_registry.cc).
void register_eltwise_ops(std::vector<OpEntry>& table);
void register_nn_ops(std::vector<OpEntry>& table);
void register_tensor_ops(std::vector<OpEntry>& table);
void register_quant_ops(std::vector<OpEntry>& table);

}  // namespace flexpipe
