// SPDX-License-Identifier: Apache-2.0
// Pool and Resize ops with an explicit kernel table, so tests can run every ISA through the op
// (addon/testing_pool.cc). The registered ops (ops.h) call these with &kernels().pool.
#pragma once

#include "runtime/dispatch.h"
#include "runtime/op_call.h"

namespace flexpipe {

// name: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool or Resize (same inputs, outputs and
// attributes as the registered op, checked against its arity). k chooses the row micro-kernels of the fast paths (runtime/pool_run.h,
// runtime/resize_run.h); k == nullptr runs the obvious reference kernels (maxpool__ref,
// avgpool_f32__ref, global_*pool_f32__ref, resize_f32__ref) and no fast path.
Status pool_op_with(const char* name, const OpCall& c, const PoolKernels* k);
// The Resize part of pool_op_with (nn_resize.cc).
Status resize_with(const OpCall& c, const PoolKernels* k);

}  // namespace flexpipe
