// SPDX-License-Identifier: Apache-2.0
// Chooses the dequantization kernel for an ISA.
#include "runtime/dispatch_quant.h"

namespace flexpipe {

void fill_quant_kernels(QuantKernels* t, Isa isa) {
    *t = QuantKernels{};
#if defined(__x86_64__) || defined(_M_X64)
    if (base_isa(isa) == Isa::avx2) t->dequant_f32 = dequant_f32__avx2;
#elif defined(__aarch64__)
    if (isa == Isa::neon) t->dequant_f32 = dequant_f32__neon;
#endif
    (void)isa;
}

}  // namespace flexpipe
