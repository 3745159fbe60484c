// SPDX-License-Identifier: Apache-2.0
// KernelTable: the fast kernel of every family for this CPU, chosen once (STYLE.md §3).
//
// Each family owns its part of the table and the function that fills it for an ISA
// (runtime/dispatch_<family>.h). kernels() builds the table on first use from selected_isa(),
// which honours FLEXPIPE_ISA, and never changes it; kernels_for(isa) builds the table for any ISA
// the CPU supports, so tests can compare every variant with __ref.
#pragma once

#include "runtime/cpu_features.h"
#include "runtime/dispatch_conv.h"
#include "runtime/dispatch_gemm.h"
#include "runtime/dispatch_quant.h"
#include "runtime/dispatch_xf.h"

namespace flexpipe {

struct KernelTable {
    Isa isa = Isa::ref;
    GemmKernels gemm;
    ConvKernels conv;
    TransformerKernels xf;
    QuantKernels quant;
};

// The table for the selected ISA (thread-safe, filled once).
const KernelTable& kernels();
// A table for a specific ISA; only valid for ISAs this CPU supports (see isa_supported).
KernelTable kernels_for(Isa isa);
// Whether this build and CPU can run kernels of `isa`.
bool isa_supported(Isa isa);

}  // namespace flexpipe
