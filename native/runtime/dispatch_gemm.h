// SPDX-License-Identifier: Apache-2.0
// The gemm part of the kernel table: which variant of each gemm kernel runs on this CPU.
#pragma once

#include "runtime/cpu_features.h"

namespace flexpipe {

struct GemmKernels {
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_gemm_kernels(GemmKernels* t, Isa isa);

}  // namespace flexpipe
