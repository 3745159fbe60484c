// SPDX-License-Identifier: Apache-2.0
// The xf part of the kernel table: which variant of each xf kernel runs on this CPU.
#pragma once

#include "runtime/cpu_features.h"

namespace flexpipe {

struct TransformerKernels {
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_transformer_kernels(TransformerKernels* t, Isa isa);

}  // namespace flexpipe
