// SPDX-License-Identifier: Apache-2.0
// The quant part of the kernel table: dequantization of k-bit cluster indices (kernels/dequant/).
#pragma once

#include "kernels/dequant/dequant.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

struct QuantKernels {
    DequantF32Fn dequant_f32 = dequant_f32__ref;
};

// Fills t with the variants for isa (ref where the build has no variant for it).
void fill_quant_kernels(QuantKernels* t, Isa isa);

}  // namespace flexpipe
