// SPDX-License-Identifier: Apache-2.0
// The pool part of the kernel table: row micro-kernels of the fast pooling and Resize paths.
//
// Pool and Resize keep their own table (rather than a KernelTable member) so the family can be built
// and tested alone: pool_kernels() is filled once from selected_isa() (which honours FLEXPIPE_ISA);
// pool_kernels_for(isa) gives the table of any ISA the CPU supports, for tests.
#pragma once

#include "kernels/pool/pool.h"
#include "kernels/resize/resize.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

struct PoolKernels {
    Isa isa = Isa::ref;
    PoolRowFn vmax = nullptr;  // vertical max / sum of one input row into the row buffer
    PoolRowFn vsum = nullptr;
    PoolHMaxFn hmax = nullptr;  // horizontal window max / scaled sum with the stride
    PoolHSumFn hsum = nullptr;
    PoolSumFn sum = nullptr;  // whole-plane sum / max (global pools)
    PoolMaxFn max = nullptr;
    ResizeRepFn resize_rep = nullptr;        // nearest: integer upscale of one row
    ResizeGatherFn resize_gather = nullptr;  // nearest: one row through an index table
    ResizeLerpFn resize_lerp = nullptr;      // linear: horizontal two-tap interpolation
    ResizeBlendFn resize_blend = nullptr;    // linear: vertical blend of two rows
    PoolMax3x3S2Fn max3x3s2 = nullptr;       // fused 3x3 stride-2 max of three rows
};

// The table for the selected ISA (thread-safe, filled once).
const PoolKernels& pool_kernels();
// The table of `isa` (ref entries where the build has no variant); only for ISAs isa_supported() accepts.
PoolKernels pool_kernels_for(Isa isa);

}  // namespace flexpipe
