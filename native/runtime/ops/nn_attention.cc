// SPDX-License-Identifier: Apache-2.0
// The fused Attention op (float32): softmax(Q_h K_hᵀ * scale + mask) V_h for a chosen subset of heads.
#include <cmath>
#include <cstring>

#include "kernels/attention/attention.h"
#include "runtime/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

constexpr int max_heads = 1024;

struct AttnShape {
    int64_t batch = 1, sq = 0, sk = 0, hidden = 0, heads = 0, dh = 0;
    int64_t mask_b = 0, mask_h = 0, mask_row = 0;  // mask strides (0 = broadcast) for batch, head, query row
    bool packed = false;                           // O holds only the listed heads, in list order
};

Status attention_error(const char* what) {
    return Status::error(StatusCode::shape_mismatch, "failed to run Attention: %s", what);
}

// Q, K, V: same rank (2 or 3), same batch and width H*dh; K and V the same rows.
Status check_qkv(const OpCall& c, AttnShape& s) {
    const TensorView &q = c.in[0], &k = c.in[1], &v = c.in[2];
    for (const TensorView* t : {&q, &k, &v, &c.out[0]})
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(*t, DType::f32, c.name, "Q, K, V and O"));
    const int r = q.rank;
    if ((r != 2 && r != 3) || k.rank != r || v.rank != r || c.out[0].rank != r)
        return attention_error("Q, K, V and O must all be [seq, hidden] or [batch, seq, hidden]");
    s.batch = r == 3 ? q.dims[0] : 1;
    s.sq = q.dims[r - 2];
    s.sk = k.dims[r - 2];
    s.hidden = q.dims[r - 1];
    if ((r == 3 && (k.dims[0] != s.batch || v.dims[0] != s.batch)) || v.dims[r - 2] != s.sk ||
        k.dims[r - 1] != s.hidden || v.dims[r - 1] != s.hidden)
        return attention_error("K and V must match Q's batch and width, and each other's rows");
    if (s.heads < 1 || s.heads > max_heads || s.hidden % s.heads != 0 || s.hidden == 0)
        return attention_error("the width must be a positive multiple of the head count");
    s.dh = s.hidden / s.heads;
    return Status::ok();
}

// mask: float32 of rank 1..4 broadcastable to [B, H, Sq, Sk] (right-aligned, last dim exactly Sk).
Status check_mask(const TensorView& m, AttnShape& s) {
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(m, DType::f32, "Attention", "mask"));
    if (m.rank < 1 || m.rank > 4 || m.dims[m.rank - 1] != s.sk)
        return attention_error("mask must have rank 1..4 and Sk as its last dim");
    const int64_t full[3] = {s.batch, s.heads, s.sq};
    int64_t strides[3] = {0, 0, 0};
    int64_t stride = s.sk;
    for (int i = 2; i >= 0; --i) {
        const int axis = m.rank - 1 - (3 - i);  // mask axis aligned with [B, H, Sq][i]
        if (axis < 0) continue;
        const int64_t d = m.dims[axis];
        if (d != 1 && d != full[i]) return attention_error("mask dims must be 1 or equal [B, H, Sq, Sk]");
        strides[i] = d == 1 ? 0 : stride;
        stride *= d;
    }
    s.mask_b = strides[0], s.mask_h = strides[1], s.mask_row = strides[2];
    return Status::ok();
}

}  // namespace

// Attention: per-head scaled dot-product attention for a subset of heads, fused (no [Sq, Sk] tensor).
// inputs: Q [B, Sq, H*dh] or [Sq, H*dh]; K, V [B, Sk, H*dh] (same rank as Q; head h is columns
//   h*dh .. (h+1)*dh of each); mask (optional): additive float32 of rank 1..4, broadcastable to
//   [B, H, Sq, Sk] with last dim Sk ([Sk] key padding, [Sq, Sk], [B, 1, 1, Sk] as BERT extends it ...).
// outputs: O [B, Sq, H*dh] — listed heads at their own columns, the other heads' columns set to 0, so
//   a following full-width output projection sums exactly the listed heads — or O [B, Sq, n*dh], the
//   listed heads packed in list order; then the workspace (uint8): T * 4 *
//   attention_workspace_floats(Sk, dh) bytes lets the op use T threads (T <= call threads; 1 at least).
// ints: [H, causal, h_0, ..., h_{n-1}]: head count; causal 0/1 (key j > query i excluded); the head
//   indices, distinct and < H (none listed: all heads in order).
// floats: [scale] (absent: 1/sqrt(dh)).
Status op_attention(const OpCall& c) {
    AttnShape s;
    s.heads = c.ints[0];
    FLEXPIPE_RETURN_IF_ERROR(check_qkv(c, s));
    const bool causal = c.ints[1] != 0;
    int64_t list[max_heads];
    bool seen[max_heads] = {false};
    const int64_t n = c.n_ints > 2 ? c.n_ints - 2 : s.heads;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t h = c.n_ints > 2 ? c.ints[2 + i] : i;
        FLEXPIPE_CHECK_ARG(h >= 0 && h < s.heads && !seen[h],
                           "failed to run Attention: head %lld is out of range or repeated (H=%lld)",
                           static_cast<long long>(h), static_cast<long long>(s.heads));
        seen[h] = true;
        list[i] = h;
    }
    const TensorView& o = c.out[0];
    const int64_t ow = o.dims[o.rank - 1];
    s.packed = ow != s.hidden;
    if ((s.packed && ow != n * s.dh) || o.dims[o.rank - 2] != s.sq || (o.rank == 3 && o.dims[0] != s.batch))
        return attention_error("O must be [B, Sq, H*dh] or [B, Sq, n*dh]");
    const bool has_mask = c.n_in > 3 && c.in[3].present();
    if (has_mask) FLEXPIPE_RETURN_IF_ERROR(check_mask(c.in[3], s));
    const TensorView& ws = c.out[1];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(ws, DType::u8, c.name, "workspace"));
    const int64_t per_thread = attention_workspace_floats(s.sk, s.dh) * 4;
    const int64_t t_ws = ws.numel / per_thread;
    FLEXPIPE_CHECK_ARG(t_ws >= 1,
                       "failed to run Attention: the workspace needs %lld bytes per thread (got %lld)",
                       static_cast<long long>(per_thread), static_cast<long long>(ws.numel));
    const int threads = static_cast<int>(c.threads < t_ws ? (c.threads < 1 ? 1 : c.threads) : t_ws);
    const float scale = static_cast<float>(c.float_at(0, 1.0 / std::sqrt(static_cast<double>(s.dh))));
    // work items (batch, head, row chunk): enough chunks per head that every thread has one
    const int64_t bh = s.batch * n;
    if (bh == 0 || s.sq == 0) return Status::ok();
    const int64_t chunks = bh >= threads ? 1 : (threads + bh - 1) / bh;
    const int64_t items = bh * chunks;
    const AttentionFn fn = kernels().attention.fused;
    float* wsd = ws.as<float>();
    parallel_for(threads, threads, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            float* scratch = wsd + t * (per_thread / 4);
            const int64_t rows = s.batch * s.sq;  // zero the unlisted heads' columns of this thread's rows
            for (int64_t r = rows * t / threads; r < rows * (t + 1) / threads && !s.packed && n < s.heads;
                 ++r)
                for (int64_t h = 0; h < s.heads; ++h)
                    if (!seen[h])
                        std::memset(o.as<float>() + r * ow + h * s.dh, 0, static_cast<size_t>(s.dh) * 4);
            for (int64_t it = items * t / threads; it < items * (t + 1) / threads; ++it) {
                const int64_t b = it / (n * chunks), i = it / chunks % n, ch = it % chunks;
                const int64_t h = list[i];
                AttentionArgs a;
                a.q = c.in[0].as<float>() + b * s.sq * s.hidden + h * s.dh;
                a.k = c.in[1].as<float>() + b * s.sk * s.hidden + h * s.dh;
                a.v = c.in[2].as<float>() + b * s.sk * s.hidden + h * s.dh;
                a.o = o.as<float>() + b * s.sq * ow + (s.packed ? i : h) * s.dh;
                a.ldq = a.ldk = a.ldv = s.hidden;
                a.ldo = ow;
                a.seq_q = s.sq, a.seq_kv = s.sk, a.dh = s.dh;
                if (has_mask) a.mask = c.in[3].as<float>() + b * s.mask_b + h * s.mask_h;
                a.mask_ld = s.mask_row;
                a.scale = scale;
                a.causal = causal;
                fn(a, s.sq * ch / chunks, s.sq * (ch + 1) / chunks, scratch);
            }
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
