// SPDX-License-Identifier: Apache-2.0
// OpCall: everything one operator invocation sees (tensors, normalized attributes, threads).
//
// How ops work: the TypeScript side (lib/model/ops/*.ts) computes every output shape and
// normalizes every attribute (defaults filled in, negative axes resolved, auto_pad turned into
// explicit pads, shape-tensor inputs folded into attributes). It then encodes the call as
// (op name, input tensors, output tensors, ints[], floats[]). The layout of ints/floats for each
// op is documented once, above that op's function in native/runtime/ops/, and mirrored by the
// op's encoder in lib/model/ops/. Output tensors arrive with their dims already set; an op only
// writes their data. An op must check what it relies on (counts, ranks, dtypes, dims agreeing)
// and return Status::error rather than read or write out of bounds: the native side trusts no
// descriptor.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "runtime/tensor_view.h"

namespace flexpipe {

struct OpCall {
    const char* name = "";  // the op's name in the op table, for error messages (set by call_op)
    const TensorView* in = nullptr;
    int32_t n_in = 0;
    const TensorView* out = nullptr;  // data is writable; dims are fixed by the plan
    int32_t n_out = 0;
    const int64_t* ints = nullptr;
    int32_t n_ints = 0;
    const double* floats = nullptr;
    int32_t n_floats = 0;
    int32_t threads = 1;  // OpenMP threads this op may use (through runtime/parallel.h only)

    int64_t int_at(int i, int64_t fallback) const { return i < n_ints ? ints[i] : fallback; }
    double float_at(int i, double fallback) const { return i < n_floats ? floats[i] : fallback; }
};

using OpFn = Status (*)(const OpCall& call);

}  // namespace flexpipe
