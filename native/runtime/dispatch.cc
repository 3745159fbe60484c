// SPDX-License-Identifier: Apache-2.0
// Fills the kernel table once for the selected ISA.
#include "runtime/dispatch.h"

namespace flexpipe {

bool isa_supported(Isa isa) {
    const CpuFeatures cpu = detect_cpu();
    switch (isa) {
        case Isa::ref: return true;
        case Isa::avx2: return cpu.avx2 && cpu.fma && cpu.f16c;
        case Isa::avx512: return cpu.avx2 && cpu.fma && cpu.f16c && cpu.avx512f;
        case Isa::neon: return cpu.neon;
    }
    return false;
}

KernelTable kernels_for(Isa isa) {
    KernelTable t;
    t.isa = isa;
    fill_gemm_kernels(&t.gemm, isa);
    fill_conv_kernels(&t.conv, isa);
    fill_transformer_kernels(&t.xf, isa);
    fill_quant_kernels(&t.quant, isa);
    return t;
}

const KernelTable& kernels() {
    static const KernelTable table = kernels_for(selected_isa());
    return table;
}

}  // namespace flexpipe
