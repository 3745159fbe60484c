// SPDX-License-Identifier: Apache-2.0
// Chooses the gemm kernel variants and cache blocking for an ISA.
#include "runtime/dispatch_gemm.h"

namespace flexpipe {

void fill_gemm_kernels(GemmKernels* t, Isa isa) {
    // ref, 4x8: kc 256 keeps the 8 KiB B micro-panel in any L1; mc 128 gives a 128 KiB A block.
    *t = GemmKernels{gemm_f32_4x8__ref, gemm_pack_a_f32__ref, 4, 8, 128, 256, 4096};
#if defined(__x86_64__) || defined(_M_X64)
    if (isa == Isa::avx2) {
        // 6x16: kc 768, mc 144 -> a 432 KiB packed A block, resident in a 512 KiB-2 MiB L2 (Zen 2-4,
        // Ice Lake and later). The 48 KiB B micro-panel (kc x 16) outgrows L1, but the micro-kernel
        // reads it sequentially at 64 bytes per 12 FMAs, which L2 streams easily; fewer k-blocks mean
        // fewer read-modify-write passes over C. Measured on Zen 4 (bench/kernels/gemm_bench.cc
        // --kc/--mc): kc 768 beats 512 by 3-8% and 256 by 10-20% on all four benchmark shapes; mc
        // 96..288 are within noise.
        *t = GemmKernels{gemm_f32_6x16__avx2, gemm_pack_a_f32__avx2, 6, 16, 144, 768, 4096};
        t->f32_dot = gemm_f32_dot__avx2;
        t->f32_narrow = gemm_f32_narrow__avx2, t->narrow_panels = 1, t->narrow_cols = 6;
        t->f32_narrow_store = gemm_f32_narrow_store__avx2;
    }
    if (isa == Isa::avx512) {
        // 8x32 (gemm_f32_8x32__avx512): 8 rows by two of the AVX2 layout's 16-column panels. kc 256 ->
        // a 32 KiB B micro-panel pair, within L1 (48 KiB on Zen 5); mc 144 (18 row groups) -> a
        // 144 KiB packed A block.
        *t = GemmKernels{gemm_f32_8x32__avx512, gemm_pack_a_f32__avx512, 8, 16, 144, 256, 4096};
        t->tile_panels = 2;
        t->f32_dot = gemm_f32_dot__avx2;
        t->f32_narrow = gemm_f32_narrow__avx512, t->narrow_panels = 2, t->narrow_cols = 14;
        t->f32_narrow_store = gemm_f32_narrow_store__avx512;
    }
#elif defined(__aarch64__)
    if (isa == Isa::neon) {
        // 8x12: kc 256 -> a 12 KiB B micro-panel (L1d 32-64 KiB on Cortex-A55/A76/X1), mc 128 -> 128 KiB
        // A block (L2 256-512 KiB per core).
        *t = GemmKernels{gemm_f32_8x12__neon, gemm_pack_a_f32__ref, 8, 12, 128, 256, 4032};
        t->f32_dot = gemm_f32_dot__neon;
        t->f32_narrow = gemm_f32_narrow__neon, t->narrow_panels = 1, t->narrow_cols = 6;
        t->f32_narrow_store = gemm_f32_narrow_store__neon;
    }
#endif
    (void)isa;
}

}  // namespace flexpipe
