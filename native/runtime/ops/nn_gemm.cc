// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul ops (float32): shape checks, bias broadcast, row-parallel calls of the GEMM kernel.
#include "kernels/gemm/gemm.h"
#include "runtime/ops/nn_ops.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

// Gemm: inputs A [M, K] (or [K, M] with transA), B [K, N] (or [N, K] with transB), C (optional,
// unidirectionally broadcastable to [M, N]); output Y [M, N]. Y = alpha * A' * B' + beta * C.
// ints: [transA, transB]; floats: [alpha, beta].
Status op_gemm(const OpCall& c) {
    const char* op = "Gemm";
    FLEXPIPE_RETURN_IF_ERROR(expect_arity(c, op, 2, 3, 1, 1));
    FLEXPIPE_RETURN_IF_ERROR(expect_ints(c, op, 2));
    const TensorView& a = c.in[0];
    const TensorView& b = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(a, DType::f32, op, "A"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(b, DType::f32, op, "B"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::f32, op, "Y"));
    if (a.rank != 2 || b.rank != 2 || y.rank != 2) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Gemm: A, B and Y must be 2-D (ranks %d, %d, %d)",
                             a.rank, b.rank, y.rank);
    }
    const bool ta = c.ints[0] != 0, tb = c.ints[1] != 0;
    const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
    const int64_t kb = tb ? b.dims[1] : b.dims[0], n = tb ? b.dims[0] : b.dims[1];
    if (k != kb || y.dims[0] != m || y.dims[1] != n) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run Gemm: shapes disagree "
                             "(M=%lld, K=%lld, K_B=%lld, N=%lld, Y=[%lld, %lld])",
                             static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(kb),
                             static_cast<long long>(n), static_cast<long long>(y.dims[0]),
                             static_cast<long long>(y.dims[1]));
    }
    const float alpha = static_cast<float>(c.float_at(0, 1.0));
    const float beta = static_cast<float>(c.float_at(1, 1.0));
    const float* cd = nullptr;
    int64_t cs[max_rank] = {0, 0};
    if (c.n_in > 2 && c.in[2].present() && beta != 0.0f) {
        const TensorView& ct = c.in[2];
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(ct, DType::f32, op, "C"));
        FLEXPIPE_CHECK_ARG(broadcast_strides(ct, y, cs),
                           "failed to run Gemm: C does not broadcast to [M, N] (rank=%d)",
                           ct.rank);
        cd = ct.as<float>();
    }
    GemmArgs g;
    g.n = n, g.k = k, g.alpha = alpha;
    g.a = a.as<float>(), g.a_rs = ta ? 1 : a.dims[1], g.a_cs = ta ? a.dims[1] : 1;
    g.b = b.as<float>(), g.b_rs = tb ? 1 : b.dims[1], g.b_cs = tb ? b.dims[1] : 1;
    g.c = y.as<float>(), g.ldc = n;
    g.accumulate = cd != nullptr;
    if (y.numel == 0) return Status::ok();
    parallel_for(m, c.threads, [&](int64_t begin, int64_t end) {
        if (cd) {
            for (int64_t i = begin; i < end; ++i)
                for (int64_t j = 0; j < n; ++j) g.c[i * n + j] = beta * cd[i * cs[0] + j * cs[1]];
        }
        gemm_f32__ref(g, begin, end);
    });
    return Status::ok();
}

// MatMul: inputs A [..., M, K] or [K], B [..., K, N] or [K] (numpy matmul: 1-D A gains a leading 1
// that is removed from Y, 1-D B gains a trailing 1 that is removed); batch dims broadcast.
// Output Y [broadcast batch..., M (if A is not 1-D), N (if B is not 1-D)]. No attributes.
Status op_matmul(const OpCall& c) {
    const char* op = "MatMul";
    FLEXPIPE_RETURN_IF_ERROR(expect_arity(c, op, 2, 2, 1, 1));
    const TensorView& a = c.in[0];
    const TensorView& b = c.in[1];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(a, DType::f32, op, "A"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(b, DType::f32, op, "B"));
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(y, DType::f32, op, "Y"));
    FLEXPIPE_CHECK_ARG(a.rank >= 1 && b.rank >= 1, "failed to run MatMul: operands must have rank >= 1");
    const bool a2 = a.rank >= 2, b2 = b.rank >= 2;
    const int64_t m = a2 ? a.dims[a.rank - 2] : 1, k = a.dims[a.rank - 1];
    const int64_t kb = b2 ? b.dims[b.rank - 2] : b.dims[0], n = b2 ? b.dims[b.rank - 1] : 1;
    const int a_batch = a2 ? a.rank - 2 : 0, b_batch = b2 ? b.rank - 2 : 0;
    const int batch_rank = y.rank - (a2 ? 1 : 0) - (b2 ? 1 : 0);
    bool ok = k == kb && batch_rank >= 0 && batch_rank >= a_batch && batch_rank >= b_batch;
    if (ok && a2) ok = y.dims[batch_rank] == m;
    if (ok && b2) ok = y.dims[y.rank - 1] == n;
    // Batch strides (in elements) of A and B seen through broadcasting to Y's batch dims.
    int64_t as[max_rank] = {0}, bs[max_rank] = {0};
    int64_t sa = m * k, sb = k * n;
    for (int i = batch_rank - 1; ok && i >= 0; --i) {
        const int ia = i - (batch_rank - a_batch), ib = i - (batch_rank - b_batch);
        const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1, dy = y.dims[i];
        ok = (da == dy || da == 1) && (db == dy || db == 1);
        as[i] = da == 1 ? 0 : sa;
        bs[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    if (!ok) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run MatMul: operand shapes disagree with each other or with Y "
                             "(M=%lld, K=%lld, K_B=%lld, N=%lld, rank Y=%d)",
                             static_cast<long long>(m),
                             static_cast<long long>(k), static_cast<long long>(kb),
                             static_cast<long long>(n), y.rank);
    }
    const int64_t batches = y.span(0, batch_rank);
    if (y.numel == 0) return Status::ok();
    const float* ad = a.as<float>();
    const float* bd = b.as<float>();
    float* yd = y.as<float>();
    parallel_for(batches * m, c.threads, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end;) {
            const int64_t bi = r / m, i0 = r % m;
            const int64_t i1 = (end - r < m - i0) ? i0 + (end - r) : m;
            int64_t ao = 0, bo = 0, rem = bi;
            for (int d = batch_rank - 1; d >= 0; --d) {
                const int64_t idx = rem % y.dims[d];
                rem /= y.dims[d];
                ao += idx * as[d];
                bo += idx * bs[d];
            }
            GemmArgs g;
            g.n = n, g.k = k;
            g.a = ad + ao, g.a_rs = k, g.a_cs = 1;
            g.b = bd + bo, g.b_rs = n, g.b_cs = 1;
            g.c = yd + bi * m * n, g.ldc = n;
            gemm_f32__ref(g, i0, i1);
            r += i1 - i0;
        }
    });
    return Status::ok();
}

}  // namespace flexpipe
