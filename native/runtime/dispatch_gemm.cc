// SPDX-License-Identifier: Apache-2.0
// Chooses the gemm kernel variants for an ISA.
#include "runtime/dispatch_gemm.h"

namespace flexpipe {

void fill_gemm_kernels(GemmKernels* t, Isa isa) {
    (void)t;
    (void)isa;
}

}  // namespace flexpipe
