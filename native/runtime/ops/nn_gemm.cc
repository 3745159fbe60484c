// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul ops (float32): shape checks, bias broadcast, and the calls into the packed-panel
// GEMM driver (runtime/gemm_driver.h). Without a workspace (direct runOp calls) they fall back to
// the strided reference kernel gemm_f32__ref.
#include <algorithm>

#include "kernels/gemm/gemm.h"
#include "runtime/dispatch.h"
#include "runtime/gemm_driver.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

namespace {

// The kernel workspace, when the plan gave one (KernelCall.workspace: one extra uint8 output).
struct Workspace {
    void* data = nullptr;
    size_t bytes = 0;
};

Workspace workspace_of(const OpCall& c, int n_outputs) {
    Workspace w;
    if (c.n_out > n_outputs && c.out[c.n_out - 1].dtype == DType::u8) {
        w.data = c.out[c.n_out - 1].data;
        w.bytes = static_cast<size_t>(c.out[c.n_out - 1].numel);
    }
    return w;
}

// A fused activation clamp (lib/model/fuse-activations.ts): floats [min, max] at position `at`.
struct Clamp {
    bool on = false;
    float min = 0.0f, max = 0.0f;
};

Clamp clamp_at(const OpCall& c, int at) {
    Clamp k;
    if (c.n_floats >= at + 2) k.on = true, k.min = static_cast<float>(c.floats[at]), k.max = static_cast<float>(c.floats[at + 1]);
    return k;
}

void set_clamp(GemmProblem& p, const Clamp& k) { p.clamp = k.on, p.min = k.min, p.max = k.max; }

// y = min(max(y, lo), hi) over rows [begin, end) of n columns (the reference path's epilogue).
void clamp_rows(float* y, int64_t n, int64_t begin, int64_t end, const Clamp& k) {
    if (!k.on) return;
    for (int64_t i = begin * n; i < end * n; ++i) y[i] = y[i] < k.min ? k.min : (y[i] > k.max ? k.max : y[i]);
}

// A packed B from gemm_pack_b holding weight columns [n0, n1): float32 [ceil((n1 - n0) / NR), K, NR]
// with NR of this process's kernels. The dims fix the panel count, not n0/n1 themselves: a slice of
// another start, or a width within the same panel count, is the plan's responsibility (it stays
// memory-safe: the kernel reads only the packed panels, whose padding columns are zero).
Status packed_b(const TensorView& b, int64_t k, int64_t n0, int64_t n1, const char* op, GemmPackedB* out) {
    const GemmKernels& g = kernels().gemm;
    if (b.rank != 3 || b.dims[2] != g.nr || b.dims[1] != k || b.dims[0] != (n1 - n0 + g.nr - 1) / g.nr) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: packed B [%lld, %lld, %lld] does not match K=%lld, columns [%lld, %lld), "
                             "NR=%d (pack it with gemm_pack_b ints [transB, n0, n1])",
                             op, static_cast<long long>(b.dims[0]), static_cast<long long>(b.dims[1]),
                             static_cast<long long>(b.dims[2]), static_cast<long long>(k), static_cast<long long>(n0),
                             static_cast<long long>(n1), g.nr);
    }
    *out = GemmPackedB{b.as<float>(), k, n0, n1, g.nr};
    return Status::ok();
}

// The weight slice [n0, n1) of an op whose ints hold it at `at` (absent: all n columns). A slice
// needs a packed B (its columns are all the op has of the weight).
Status column_slice(const OpCall& c, int at, bool packed, int64_t n, const char* op, int64_t* n0, int64_t* n1) {
    *n0 = 0, *n1 = n;
    if (c.n_ints <= at) return Status::ok();
    FLEXPIPE_CHECK_ARG(c.n_ints == at + 2, "failed to run %s: a weight slice needs both n0 and n1 (got %d ints)", op,
                       c.n_ints);
    FLEXPIPE_CHECK_ARG(packed, "failed to run %s: a weight slice [n0, n1) needs a packed B (packedB = 1)", op);
    *n0 = c.ints[at], *n1 = c.ints[at + 1];
    FLEXPIPE_CHECK_ARG(0 <= *n0 && *n0 <= *n1 && *n1 <= n,
                       "failed to run %s: weight slice [%lld, %lld) must satisfy 0 <= n0 <= n1 <= N = %lld", op,
                       static_cast<long long>(*n0), static_cast<long long>(*n1), static_cast<long long>(n));
    return Status::ok();
}

}  // namespace

// Gemm: inputs A [M, K] (or [K, M] with transA), B [K, N] (or [N, K] with transB), C (optional,
// unidirectionally broadcastable to [M, N]); output Y [M, N]. Y = alpha * A' * B' + beta * C.
// ints: [transA, transB, packedB = 0, (n0, n1)]; floats: [alpha, beta, (min, max)]. With packedB = 1, B
// is the output of the gemm_pack_b prepack ([ceil(N / NR), K, NR], transB already applied). min/max:
// a fused activation, Y = min(max(Y, min), max). Optional last output: the uint8 workspace
// (gemm_workspace_bytes; required with packedB).
// Weight slice (FlexNN), packedB = 1 only: with n0, n1 (0 <= n0 <= n1 <= N, N = Y's columns), B holds
// only weight columns [n0, n1) (gemm_pack_b ints [transB, n0, n1]: [ceil((n1 - n0) / NR), K, NR]) and
// the op writes only Y[:, n0:n1]; the other columns are neither read nor written. C is indexed by
// absolute column (a bias C[j] or a full C[i, j] alike) and the clamp applies to the written columns.
// Running the slices of a partition of [0, N) in any order yields the unsliced op's Y.
Status op_gemm(const OpCall& c) {
    const TensorView& a = c.in[0];
    const TensorView& b = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{a, "A"}, {b, "B"}, {y, "Y"}}));
    const bool packed = c.int_at(2, 0) != 0;
    if (a.rank != 2 || (!packed && b.rank != 2) || y.rank != 2) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Gemm: A, B and Y must be 2-D (ranks %d, %d, %d)",
                             a.rank, b.rank, y.rank);
    }
    const bool ta = c.ints[0] != 0, tb = c.ints[1] != 0;
    const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
    const int64_t kb = packed ? k : (tb ? b.dims[1] : b.dims[0]), n = packed ? y.dims[1] : (tb ? b.dims[0] : b.dims[1]);
    if (k != kb || y.dims[0] != m || y.dims[1] != n) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Gemm: shapes disagree "
                             "(M=%lld, K=%lld, K_B=%lld, N=%lld, Y=[%lld, %lld])",
                             static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(kb),
                             static_cast<long long>(n), static_cast<long long>(y.dims[0]),
                             static_cast<long long>(y.dims[1]));
    }
    int64_t n0, n1;
    FLEXPIPE_RETURN_IF_ERROR(column_slice(c, 3, packed, n, c.name, &n0, &n1));
    GemmPackedB pb;
    if (packed) FLEXPIPE_RETURN_IF_ERROR(packed_b(b, k, n0, n1, c.name, &pb));
    const float alpha = static_cast<float>(c.float_at(0, 1.0));
    const float beta = static_cast<float>(c.float_at(1, 1.0));
    const Clamp act = clamp_at(c, 2);
    const float* cd = nullptr;
    int64_t cs[max_rank] = {0, 0};
    if (c.n_in > 2 && c.in[2].present() && beta != 0.0f) {
        const TensorView& ct = c.in[2];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(ct, DType::f32, c.name, "C"));
        FLEXPIPE_CHECK_ARG(broadcast_strides(ct, y, cs),
                           "failed to run Gemm: C does not broadcast to [M, N] (rank=%d)",
                           ct.rank);
        cd = ct.as<float>();
    }
    if (y.numel == 0 || n0 == n1) return Status::ok();
    const Workspace ws = workspace_of(c, 1);
    FLEXPIPE_CHECK_ARG(ws.data || !packed, "failed to run Gemm: a packed B needs a workspace");
    // A per-column C with beta 1 is the GEMM bias; any other C is written into Y (times beta) first.
    const bool bias = cd && beta == 1.0f && cs[0] == 0 && (cs[1] == 1 || n == 1);
    if (cd && !bias) {
        parallel_for(m, c.threads, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i)
                for (int64_t j = n0; j < n1; ++j) y.as<float>()[i * n + j] = beta * cd[i * cs[0] + j * cs[1]];
        });
    }
    if (!ws.data) {
        GemmArgs g;
        g.n = n, g.k = k, g.alpha = alpha;
        g.a = a.as<float>(), g.a_rs = ta ? 1 : a.dims[1], g.a_cs = ta ? a.dims[1] : 1;
        g.b = b.as<float>(), g.b_rs = tb ? 1 : b.dims[1], g.b_cs = tb ? b.dims[1] : 1;
        g.c = y.as<float>(), g.ldc = n;
        g.accumulate = cd != nullptr && !bias;
        parallel_for(m, c.threads, [&](int64_t begin, int64_t end) {
            gemm_f32__ref(g, begin, end);
            if (bias)
                for (int64_t i = begin; i < end; ++i)
                    for (int64_t j = 0; j < n; ++j) g.c[i * n + j] += cd[j * cs[1]];
            clamp_rows(g.c, n, begin, end, act);
        });
        return Status::ok();
    }
    GemmProblem p;
    p.k = k;
    p.a = a.as<float>(), p.a_rs = ta ? 1 : a.dims[1], p.a_cs = ta ? a.dims[1] : 1;
    if (packed) {
        p.b_packed = pb;
    } else {
        p.b = b.as<float>(), p.b_rs = tb ? 1 : b.dims[1], p.b_cs = tb ? b.dims[1] : 1;
    }
    p.c = y.as<float>(), p.c_rs = n, p.c_cs = 1;
    p.m1 = m, p.n0 = n0, p.n1 = n1;
    p.alpha = alpha;
    p.beta = cd && !bias ? 1.0f : 0.0f;
    p.bias = bias ? cd : nullptr;
    set_clamp(p, act);
    return gemm_run(kernels().gemm, p, ws.data, ws.bytes, c.threads);
}

namespace {

// MatMul operands after numpy broadcasting: Y's batch dims and, per batch dim, A's and B's strides.
struct MatMulShape {
    int64_t m = 0, k = 0, n = 0, batches = 1;
    int batch_rank = 0;
    int64_t as[max_rank] = {0}, bs[max_rank] = {0};
};

Status matmul_shape(const TensorView& a, const TensorView& b, const TensorView& y, bool packed, MatMulShape* s) {
    const bool a2 = a.rank >= 2, b2 = packed || b.rank >= 2;
    const int64_t m = a2 ? a.dims[a.rank - 2] : 1, k = a.dims[a.rank - 1];
    const int64_t kb = packed ? k : (b2 ? b.dims[b.rank - 2] : b.dims[0]);
    const int64_t n = packed ? y.dims[y.rank - 1] : (b2 ? b.dims[b.rank - 1] : 1);
    const int a_batch = a2 ? a.rank - 2 : 0, b_batch = b2 && !packed ? b.rank - 2 : 0;
    const int batch_rank = y.rank - (a2 ? 1 : 0) - (b2 ? 1 : 0);
    bool ok = k == kb && batch_rank >= 0 && batch_rank >= a_batch && batch_rank >= b_batch;
    if (ok && a2) ok = y.dims[batch_rank] == m;
    if (ok && b2) ok = y.dims[y.rank - 1] == n;
    int64_t sa = m * k, sb = k * n;
    for (int i = batch_rank - 1; ok && i >= 0; --i) {
        const int ia = i - (batch_rank - a_batch), ib = i - (batch_rank - b_batch);
        const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1, dy = y.dims[i];
        ok = (da == dy || da == 1) && (db == dy || db == 1);
        s->as[i] = da == 1 ? 0 : sa;
        s->bs[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    if (!ok) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run MatMul: operand shapes disagree with each other or with Y "
                             "(M=%lld, K=%lld, K_B=%lld, N=%lld, rank Y=%d)",
                             static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(kb),
                             static_cast<long long>(n), y.rank);
    }
    s->m = m, s->k = k, s->n = n, s->batch_rank = batch_rank;
    s->batches = y.span(0, batch_rank);
    return Status::ok();
}

// Element offsets of batch bi in A and B.
void batch_offsets(const MatMulShape& s, const TensorView& y, int64_t bi, int64_t* ao, int64_t* bo) {
    *ao = 0, *bo = 0;
    for (int d = s.batch_rank - 1; d >= 0; --d) {
        const int64_t idx = bi % y.dims[d];
        bi /= y.dims[d];
        *ao += idx * s.as[d];
        *bo += idx * s.bs[d];
    }
}

// The strided reference kernel over batches x rows (no workspace).
void matmul_reference(const MatMulShape& s, const TensorView& a, const TensorView& b, const TensorView& y,
                      const Clamp& act, int threads) {
    const int64_t m = s.m, k = s.k, n = s.n;
    parallel_for(s.batches * m, threads, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end;) {
            const int64_t bi = r / m, i0 = r % m;
            const int64_t i1 = (end - r < m - i0) ? i0 + (end - r) : m;
            int64_t ao, bo;
            batch_offsets(s, y, bi, &ao, &bo);
            GemmArgs g;
            g.n = n, g.k = k;
            g.a = a.as<float>() + ao, g.a_rs = k, g.a_cs = 1;
            g.b = b.as<float>() + bo, g.b_rs = n, g.b_cs = 1;
            g.c = y.as<float>() + bi * m * n, g.ldc = n;
            gemm_f32__ref(g, i0, i1);
            clamp_rows(g.c, n, i0, i1, act);
            r += i1 - i0;
        }
    });
}

// Per-batch GEMMs with raw B. With room for several one-thread workspaces, threads take whole
// batches (attention: many small products); otherwise batches run in turn, each on all threads.
Status matmul_batched(const MatMulShape& s, const TensorView& a, const TensorView& b, const TensorView& y,
                      const Workspace& ws, const Clamp& act, int threads) {
    const GemmKernels& g = kernels().gemm;
    auto problem = [&](int64_t bi) {
        int64_t ao, bo;
        batch_offsets(s, y, bi, &ao, &bo);
        GemmProblem p;
        p.k = s.k;
        p.a = a.as<float>() + ao, p.a_rs = s.k, p.a_cs = 1;
        p.b = b.as<float>() + bo, p.b_rs = s.n, p.b_cs = 1;
        p.c = y.as<float>() + bi * s.m * s.n, p.c_rs = s.n, p.c_cs = 1;
        p.m1 = s.m, p.n1 = s.n;
        set_clamp(p, act);
        return p;
    };
    const size_t one = gemm_workspace_bytes(g, problem(0), 1);
    const int64_t per_batch = std::min<int64_t>({threads, s.batches, static_cast<int64_t>(ws.bytes / one)});
    if (per_batch >= 2) {
        Status st[64];
        const int tb = static_cast<int>(std::min<int64_t>(per_batch, 64));
        parallel_for(tb, tb, [&](int64_t id0, int64_t id1) {
            for (int64_t id = id0; id < id1; ++id) {
                char* slot = static_cast<char*>(ws.data) + static_cast<size_t>(id) * one;
                for (int64_t bi = s.batches * id / tb; bi < s.batches * (id + 1) / tb && st[id].is_ok(); ++bi)
                    st[id] = gemm_run(g, problem(bi), slot, one, 1);
            }
        });
        for (int i = 0; i < tb; ++i) FLEXPIPE_RETURN_IF_ERROR(st[i]);
        return Status::ok();
    }
    for (int64_t bi = 0; bi < s.batches; ++bi) FLEXPIPE_RETURN_IF_ERROR(gemm_run(g, problem(bi), ws.data, ws.bytes, threads));
    return Status::ok();
}

}  // namespace

// MatMul: inputs A [..., M, K] or [K], B [..., K, N] or [K] (numpy matmul: 1-D A gains a leading 1
// that is removed from Y, 1-D B gains a trailing 1 that is removed); batch dims broadcast.
// Output Y [broadcast batch..., M (if A is not 1-D), N (if B is not 1-D)].
// ints: [packedB = 0, (n0, n1)]; floats: [(min, max)]. With packedB = 1, B is a constant 2-D [K, N]
// packed by gemm_pack_b ([ceil(N / NR), K, NR]) and A's batches and rows form one GEMM of batch * M rows.
// min/max: a fused activation, Y = min(max(Y, min), max). Optional last output: the uint8 workspace
// (required with packedB).
// Weight slice (FlexNN), packedB = 1 only: with n0, n1 (0 <= n0 <= n1 <= N, N = Y's last dim), B holds
// only weight columns [n0, n1) (gemm_pack_b ints [0, n0, n1]: [ceil((n1 - n0) / NR), K, NR]) and the
// op writes only Y[..., n0:n1]; the other columns are neither read nor written, the clamp applies to
// the written ones.
// Bias (optional input 2; lib/model/fuse-matmul-bias.ts moves an Add of a constant row into it): float32
// with N elements, bias[j] added to column j in the GEMM epilogue, before the clamp. Only where A and
// B form one GEMM (packed or shared B, A not broadcast).
Status op_matmul(const OpCall& c) {
    const TensorView& a = c.in[0];
    const TensorView& b = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(c.name, {{a, "A"}, {b, "B"}, {y, "Y"}}));
    FLEXPIPE_CHECK_ARG(a.rank >= 1 && b.rank >= 1, "failed to run MatMul: operands must have rank >= 1");
    const bool packed = c.int_at(0, 0) != 0;
    FLEXPIPE_CHECK_ARG(!packed || y.rank >= 1, "failed to run MatMul: a packed B needs Y of rank >= 1");
    MatMulShape s;
    FLEXPIPE_RETURN_IF_ERROR(matmul_shape(a, b, y, packed, &s));
    int64_t n0, n1;
    FLEXPIPE_RETURN_IF_ERROR(column_slice(c, 1, packed, s.n, c.name, &n0, &n1));
    if (y.numel == 0 || n0 == n1) return Status::ok();
    const Workspace ws = workspace_of(c, 1);
    FLEXPIPE_CHECK_ARG(ws.data || !packed, "failed to run MatMul: a packed B needs a workspace");
    const Clamp act = clamp_at(c, 0);
    const float* bias = nullptr;
    if (c.n_in > 2 && c.in[2].present()) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[2], DType::f32, c.name, "bias"));
        FLEXPIPE_CHECK_ARG(c.in[2].numel == s.n, "failed to run MatMul: the bias has %lld elements, N is %lld",
                           static_cast<long long>(c.in[2].numel), static_cast<long long>(s.n));
        bias = c.in[2].as<float>();
    }
    const bool one_gemm = (packed || b.numel == s.k * s.n) && a.numel == s.batches * s.m * s.k;
    FLEXPIPE_CHECK_ARG(!bias || (one_gemm && ws.data),
                       "failed to run MatMul: a bias needs one GEMM (a shared B, A not broadcast) and a workspace");
    if (!ws.data) {
        matmul_reference(s, a, b, y, act, c.threads);
        return Status::ok();
    }
    // One GEMM of batches * M rows when B is shared (packed or 2-D) and A is not broadcast.
    if (one_gemm) {
        GemmProblem p;
        p.k = s.k;
        p.a = a.as<float>(), p.a_rs = s.k, p.a_cs = 1;
        if (packed) {
            FLEXPIPE_RETURN_IF_ERROR(packed_b(b, s.k, n0, n1, c.name, &p.b_packed));
        } else {
            p.b = b.as<float>(), p.b_rs = b.rank >= 2 ? s.n : 1, p.b_cs = 1;
        }
        p.c = y.as<float>(), p.c_rs = s.n, p.c_cs = 1;
        p.m1 = s.batches * s.m, p.n0 = n0, p.n1 = n1;
        p.bias = bias;
        set_clamp(p, act);
        return gemm_run(kernels().gemm, p, ws.data, ws.bytes, c.threads);
    }
    FLEXPIPE_CHECK_ARG(!packed, "failed to run MatMul: a packed B needs A without broadcast batch dims");
    return matmul_batched(s, a, b, y, ws, act, c.threads);
}

}  // namespace flexpipe
