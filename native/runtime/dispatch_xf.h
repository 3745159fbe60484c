// SPDX-License-Identifier: Apache-2.0
// The xf part of the kernel table: transformer kernels (attention, layer norm, softmax) and the float32
// element-wise fast paths (binary, unary incl. GELU, clip), one variant per entry for this CPU.
//
// Every entry has the signature of its __ref kernel and the same contract; the SIMD variants fall
// back to __ref themselves for the cases they do not vectorize (strided softmax, uncommon unary or
// binary ops), so callers always call through the table.
#pragma once

#include "kernels/attention/attention.h"
#include "kernels/eltwise/eltwise.h"
#include "kernels/norm/norm.h"
#include "kernels/softmax/softmax.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

using LayerNormRowFn = void (*)(const float* x, float* y, int64_t n, const float* w, int64_t w_n,
                                const float* b, int64_t b_n, float epsilon, float* mean_out,
                                float* inv_std_out);
using UnaryF32Fn = void (*)(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
using BinaryF32Fn = void (*)(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                             int64_t n);
using ClipF32Fn = void (*)(const float* x, float* y, int64_t n, float lo, float hi);

// y[i] = min(max(x[i], lo), hi): clip__ref on float32 (the table's ref entry).
void clip_f32__ref(const float* x, float* y, int64_t n, float lo, float hi);

struct TransformerKernels {
    AttentionFn attention = attention_f32__ref;
    LayerNormRowFn layernorm_row = layernorm_row_f32__ref;
    SoftmaxFn softmax = softmax_f32__ref;
    UnaryF32Fn unary_f32 = unary_f32__ref;
    BinaryF32Fn binary_f32 = binary_f32__ref;
    ClipF32Fn clip_f32 = clip_f32__ref;
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_transformer_kernels(TransformerKernels* t, Isa isa);

}  // namespace flexpipe
