// SPDX-License-Identifier: Apache-2.0
// Chooses the xf kernel variants for an ISA.
#include "runtime/dispatch_xf.h"

namespace flexpipe {

void fill_transformer_kernels(TransformerKernels* t, Isa isa) {
    (void)t;
    (void)isa;
}

}  // namespace flexpipe
