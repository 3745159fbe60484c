// SPDX-License-Identifier: Apache-2.0
// Chooses the conv kernel variants for an ISA.
#include "runtime/dispatch_conv.h"

namespace flexpipe {

void fill_conv_kernels(ConvKernels* t, Isa isa) {
    (void)t;
    (void)isa;
}

}  // namespace flexpipe
