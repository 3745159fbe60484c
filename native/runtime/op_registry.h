// SPDX-License-Identifier: Apache-2.0
// The table of native operators: name -> function. Op codes are indices into this table; the
// TypeScript encoder asks the addon for the table (binding.opNames()) and never hard-codes codes.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/op_call.h"

namespace flexpipe {

// The counts every call of an op must have (max_in/max_out = op_many: no limit). call_op checks
// them before the op runs, so an op body may read in[0..min_in), out[0..min_out) and
// ints[0..min_ints) without checking again.
struct OpArity {
    int32_t min_in, max_in, min_out, max_out, min_ints;
};
constexpr int32_t op_many = 1 << 20;

struct OpEntry {
    const char* name;
    OpFn fn;
    OpArity arity;
};

// Filled once on first use; read-only afterwards, so it is safe from any thread.
const std::vector<OpEntry>& op_table();
// The entry named `name`, or null.
const OpEntry* find_op(const char* name);
// Whether call has the counts of e.arity (the error names the op).
Status check_arity(const OpEntry& e, const OpCall& call);
// Runs e.fn on call after check_arity, with call.name = e.name.
Status call_op(const OpEntry& e, OpCall call);

}  // namespace flexpipe
