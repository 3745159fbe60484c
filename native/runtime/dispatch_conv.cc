// SPDX-License-Identifier: Apache-2.0
// Chooses the conv kernel variants for an ISA.
#include "runtime/dispatch_conv.h"

namespace flexpipe {

void fill_conv_kernels(ConvKernels* t, Isa isa) {
    *t = ConvKernels{};
    t->f63 = {winograd_f32_f63_input__ref, winograd_f32_f63_output__ref,
                  winograd_f32_f63_filter_panel__ref};
    t->f23 = {winograd_f32_f23_input__ref, winograd_f32_f23_output__ref,
                  winograd_f32_f23_filter_panel__ref};
    switch (base_isa(isa)) {
        case Isa::ref:
            break;
        case Isa::avx2:
#if defined(__x86_64__) || defined(_M_X64)
            t->f63 = {winograd_f32_f63_input__avx2, winograd_f32_f63_output__avx2,
                  winograd_f32_f63_filter_panel__avx2};
            t->f23 = {winograd_f32_f23_input__avx2, winograd_f32_f23_output__avx2,
                  winograd_f32_f23_filter_panel__avx2};
            t->winograd_gemm = winograd_f32_6x16__avx2;
            t->depthwise_3x3 = depthwise_f32_3x3__avx2;
            t->direct = conv_f32__avx2;
            t->im2col = im2col_f32__avx2;
            t->stem_rows = conv_stem_rows_f32__avx2;
#endif
            break;
        case Isa::avx512:  // base_isa maps it to avx2
            break;
        case Isa::neon:
#if defined(__aarch64__)
            t->f63 = {winograd_f32_f63_input__neon, winograd_f32_f63_output__neon,
                  winograd_f32_f63_filter_panel__neon};
            t->f23 = {winograd_f32_f23_input__neon, winograd_f32_f23_output__neon,
                  winograd_f32_f23_filter_panel__neon};
            t->winograd_gemm = winograd_f32_6x16__neon;
            t->depthwise_3x3 = depthwise_f32_3x3__neon;
            t->direct = conv_f32__neon;
            t->im2col = im2col_f32__neon;
            t->stem_rows = conv_stem_rows_f32__neon;
#endif
            break;
    }
#if defined(__x86_64__) || defined(_M_X64)
    if (isa == Isa::avx512) {  // the rest as avx2
        t->winograd_gemm = winograd_f32_6x16__avx512;
        t->f63.filter_panel = winograd_f32_f63_filter_panel__avx512;
        t->f23.filter_panel = winograd_f32_f23_filter_panel__avx512;
        t->depthwise_3x3 = depthwise_f32_3x3__avx512;
        t->stem_rows = conv_stem_rows_f32__avx512;
    }
#endif
}

}  // namespace flexpipe
