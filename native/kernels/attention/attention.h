// SPDX-License-Identifier: Apache-2.0
// Fused scaled dot-product attention (float32) for one head: O = softmax(Q Kᵀ * scale + mask) V.
//
// Layout: Q, K, V and O are row-major with one row per token; the head's dh columns start at the
// pointers given (for a [seq, hidden] activation with head h at columns h*dh .. (h+1)*dh, pass
// base + h*dh and ld = hidden). Row strides ldq, ldk, ldv, ldo are in floats and may exceed dh (a
// fused [seq, 3*hidden] QKV projection is read in place). mask is additive: query row i adds
// mask[i * mask_ld + j] to the score of key j (mask_ld = 0: one [seq_kv] row for every query row);
// null means no mask. causal excludes keys j > i (upper-left aligned, as ONNX Attention's is_causal).
//
// Work split: a call computes query rows [row_begin, row_end) of one head, single-threaded; the
// runtime (runtime/ops/nn_attention.cc) splits (batch, head, row range) items over threads.
//
// Algorithm: per-row blocks, never a [seq_q, seq_kv] matrix. The ref computes one score row at a
// time; the SIMD variants transpose the keys they need once per call (Kᵀ panel, dh x seq_kv padded
// to 16 columns) and then, for blocks of MR query rows (6 on AVX2, 4 on NEON): S = Q_blk Kᵀ * scale
// (register-blocked MR x 16 tiles), + mask, exact row softmax (max-subtract, vector exp, sum,
// normalize), O_blk = P V (MR x 16 tiles). With causal, key columns past the block's last row are
// skipped, which halves the work.
//
// Workspace (floats, per calling thread, 64-byte alignment slack included):
//   attention_workspace_floats(seq_kv, dh) = (dh + 8) * round_up(seq_kv, 16) + 16
// i.e. the Kᵀ panel plus an 8-row score block; O(seq_kv * dh), independent of seq_q.
//
// Accuracy: every variant, ref included, is tested against float64 to
//   |o_i - exact_i| <= max|v| * 2^-24 * (2 (dh + 1) sigma_i + nk_i + 16),
//   sigma_i = scale * max_j sum_d |q_id k_jd| + max_j |mask_ij| (entries <= -1e4 excluded),
// nk_i the keys row i sees: a score's float error moves its probability by as much (relative), the
// vector exp adds < 2^-23, the float sums over keys nk * 2^-24. (Measured: under 5% of the bound.)
//
// Semantics at the edges: a row whose every score is -inf (fully masked) gives NaN, as the unfused
// Softmax(MatMul) graph does; NaN inputs propagate.
#pragma once

#include <cstdint>

namespace flexpipe {

struct AttentionArgs {
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    float* o = nullptr;
    int64_t ldq = 0, ldk = 0, ldv = 0, ldo = 0;
    int64_t seq_q = 0, seq_kv = 0, dh = 0;
    const float* mask = nullptr;
    int64_t mask_ld = 0;
    float scale = 1.0f;
    bool causal = false;
};

static inline int64_t attention_workspace_floats(int64_t seq_kv, int64_t dh) {
    return (dh + 8) * ((seq_kv + 15) / 16 * 16) + 16;
}

// Computes O rows [row_begin, row_end) of one head; ws holds attention_workspace_floats() floats.
using AttentionFn = void (*)(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws);
void attention_f32__ref(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws);
void attention_f32__avx2(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws);
void attention_f32__neon(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws);

}  // namespace flexpipe
