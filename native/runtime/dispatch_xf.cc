// SPDX-License-Identifier: Apache-2.0
// Chooses the xf kernel variants for an ISA.
#include "runtime/dispatch_xf.h"

namespace flexpipe {

void clip_f32__ref(const float* x, float* y, int64_t n, float lo, float hi) {
    clip__ref(DType::f32, x, y, n, &lo, &hi);
}

void fill_transformer_kernels(TransformerKernels* t, Isa isa) {
    *t = TransformerKernels{};
    switch (base_isa(isa)) {
        case Isa::ref:
            return;
        case Isa::avx2:
#if defined(__x86_64__) || defined(_M_X64)
            t->attention = attention_f32__avx2;
            t->layernorm_row = layernorm_row_f32__avx2;
            t->softmax = softmax_f32__avx2;
            t->unary_f32 = unary_f32__avx2;
            t->binary_f32 = binary_f32__avx2;
            t->clip_f32 = clip_f32__avx2;
#endif
            return;
        case Isa::avx512:  // base_isa maps it to avx2
            break;
        case Isa::neon:
#if defined(__aarch64__)
            t->attention = attention_f32__neon;
            t->layernorm_row = layernorm_row_f32__neon;
            t->softmax = softmax_f32__neon;
            t->unary_f32 = unary_f32__neon;
            t->binary_f32 = binary_f32__neon;
            t->clip_f32 = clip_f32__neon;
#endif
            return;
    }
}

}  // namespace flexpipe
