// SPDX-License-Identifier: Apache-2.0
// Fills the kernel table for an ISA: each ISA's variants listed once, over the __ref defaults.
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

namespace {

#if defined(__x86_64__) || defined(_M_X64)
void fill_avx2(KernelTable& t) {
    // 6x16: kc 768, mc 144 -> a 432 KiB packed A block, resident in a 512 KiB-2 MiB L2 (Zen 2-4, Ice Lake
    // and later). The 48 KiB B micro-panel (kc x 16) outgrows L1, but the micro-kernel reads it
    // sequentially at 64 bytes per 12 FMAs, which L2 streams easily; fewer k-blocks mean fewer
    // read-modify-write passes over C. Measured on Zen 4 (bench/kernels/gemm_bench.cc --kc/--mc): kc 768
    // beats 512 by 3-8% and 256 by 10-20% on all four benchmark shapes; mc 96..288 are within noise.
    GemmKernels& g = t.gemm;
    g.f32 = gemm_f32_6x16__avx2, g.f32_pack_a = gemm_pack_a_f32__avx2;
    g.mr = 6, g.nr = 16, g.mc = 144, g.kc = 768, g.nc = 4096;
    g.f32_dot = gemm_f32_dot__avx2;
    g.f32_narrow = gemm_f32_narrow__avx2, g.narrow_panels = 1, g.narrow_cols = 6;
    g.f32_narrow_store = gemm_f32_narrow_store__avx2;
    ConvKernels& c = t.conv;
    c.direct = conv_f32__avx2;
    c.f63 = {winograd_f32_f63_input__avx2, winograd_f32_f63_output__avx2, winograd_f32_f63_filter_panel__avx2};
    c.f23 = {winograd_f32_f23_input__avx2, winograd_f32_f23_output__avx2, winograd_f32_f23_filter_panel__avx2};
    c.winograd_gemm = winograd_f32_6x16__avx2;
    c.depthwise_3x3 = depthwise_f32_3x3__avx2;
    c.depthwise_kxk = depthwise_f32_kxk__avx2;
    c.grouped = grouped_conv_f32__avx2;
    c.im2col = im2col_f32__avx2;
    c.stem_rows = conv_stem_rows_f32__avx2;
    t.attention = {attention_f32__avx2, layernorm_row_f32__avx2, softmax_f32__avx2};
    t.eltwise = {unary_f32__avx2, binary_f32__avx2, clip_f32__avx2};
    t.pool = {pool_vmax_f32__avx2,     pool_vsum_f32__avx2,     pool_hmax_f32__avx2,  pool_hsum_f32__avx2,
              pool_sum_f32__avx2,      pool_max_f32__avx2,      pool_max3x3s2_f32__avx2,
              resize_rep_f32__avx2,    resize_gather_f32__avx2, resize_lerp_f32__avx2, resize_blend_f32__avx2};
    t.quant.dequant_f32 = dequant_f32__avx2;
}

// AVX2's table with the AVX-512 variants on top.
void fill_avx512(KernelTable& t) {
    fill_avx2(t);
    // 8x32 (gemm_f32_8x32__avx512): 8 rows by two of the AVX2 layout's 16-column panels. kc 256 -> a
    // 32 KiB B micro-panel pair, within L1 (48 KiB on Zen 5); mc 144 (18 row groups) -> a 144 KiB packed
    // A block.
    GemmKernels& g = t.gemm;
    g.f32 = gemm_f32_8x32__avx512, g.f32_pack_a = gemm_pack_a_f32__avx512;
    g.mr = 8, g.nr = 16, g.mc = 144, g.kc = 256, g.nc = 4096;
    g.tile_panels = 2;
    g.f32_narrow = gemm_f32_narrow__avx512, g.narrow_panels = 2, g.narrow_cols = 14;
    g.f32_narrow_store = gemm_f32_narrow_store__avx512;
    ConvKernels& c = t.conv;
    c.winograd_gemm = winograd_f32_6x16__avx512;
    c.f63.filter_panel = winograd_f32_f63_filter_panel__avx512;
    c.f23.filter_panel = winograd_f32_f23_filter_panel__avx512;
    c.depthwise_3x3 = depthwise_f32_3x3__avx512;
    c.depthwise_kxk = depthwise_f32_kxk__avx512;
    c.grouped = grouped_conv_f32__avx512;
    t.eltwise.unary_f32 = unary_f32__avx512;
    c.stem_rows = conv_stem_rows_f32__avx512;
    t.pool.max3x3s2 = pool_max3x3s2_f32__avx512;
}
#endif

#if defined(__aarch64__)
void fill_neon(KernelTable& t) {
    // 8x12: kc 256 -> a 12 KiB B micro-panel (L1d 32-64 KiB on Cortex-A55/A76/X1), mc 128 -> 128 KiB A
    // block (L2 256-512 KiB per core).
    GemmKernels& g = t.gemm;
    g.f32 = gemm_f32_8x12__neon;
    g.mr = 8, g.nr = 12, g.mc = 128, g.kc = 256, g.nc = 4032;
    g.f32_dot = gemm_f32_dot__neon;
    g.f32_narrow = gemm_f32_narrow__neon, g.narrow_panels = 1, g.narrow_cols = 6;
    g.f32_narrow_store = gemm_f32_narrow_store__neon;
    ConvKernels& c = t.conv;
    c.direct = conv_f32__neon;
    c.f63 = {winograd_f32_f63_input__neon, winograd_f32_f63_output__neon, winograd_f32_f63_filter_panel__neon};
    c.f23 = {winograd_f32_f23_input__neon, winograd_f32_f23_output__neon, winograd_f32_f23_filter_panel__neon};
    c.winograd_gemm = winograd_f32_6x16__neon;
    c.depthwise_3x3 = depthwise_f32_3x3__neon;
    c.depthwise_kxk = depthwise_f32_kxk__neon;
    c.grouped = grouped_conv_f32__neon;
    c.im2col = im2col_f32__neon;
    c.stem_rows = conv_stem_rows_f32__neon;
    t.attention = {attention_f32__neon, layernorm_row_f32__neon, softmax_f32__neon};
    t.eltwise = {unary_f32__neon, binary_f32__neon, clip_f32__neon};
    t.pool = {pool_vmax_f32__neon,     pool_vsum_f32__neon,     pool_hmax_f32__neon,  pool_hsum_f32__neon,
              pool_sum_f32__neon,      pool_max_f32__neon,      pool_max3x3s2_f32__neon,
              resize_rep_f32__neon,    resize_gather_f32__neon, resize_lerp_f32__neon, resize_blend_f32__neon};
    t.quant.dequant_f32 = dequant_f32__neon;
}
#endif

}  // namespace

KernelTable kernels_for(Isa isa) {
    KernelTable t;
    t.isa = isa;
#if defined(__x86_64__) || defined(_M_X64)
    if (isa == Isa::avx2) fill_avx2(t);
    if (isa == Isa::avx512) fill_avx512(t);
#elif defined(__aarch64__)
    if (isa == Isa::neon) fill_neon(t);
#endif
    return t;
}

const KernelTable& kernels() {
    static const KernelTable table = kernels_for(selected_isa());
    return table;
}

}  // namespace flexpipe
