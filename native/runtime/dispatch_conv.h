// SPDX-License-Identifier: Apache-2.0
// The conv part of the kernel table: which variant of each conv kernel runs on this CPU.
#pragma once

#include "runtime/cpu_features.h"

namespace flexpipe {

struct ConvKernels {
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_conv_kernels(ConvKernels* t, Isa isa);

}  // namespace flexpipe
