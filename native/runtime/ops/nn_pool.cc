// SPDX-License-Identifier: Apache-2.0
// Pooling ops: MaxPool (with optional Indices), AveragePool, LpPool and the Global* variants.
#include "runtime/ops/nn_pool.h"

#include <cstring>

#include "kernels/pool/pool.h"
#include "runtime/op_registry.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/nn_spatial.h"
#include "runtime/parallel.h"
#include "runtime/pool_run.h"

namespace flexpipe {

// Shared checks: X [N, C, spatial...] and Y [N, C, out...] of rank 2 + nsp and equal dtypes; each out
// dim is the floor formula or one more (ceil_mode adds at most one window; only its in-range taps are
// read).
static Status pool_shape(const OpCall& c, const SpatialAttrs& sa, PoolShape* ps) {
    const TensorView& x = c.in[0];
    const TensorView& y = c.out[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_same_dtype(x, y, c.name));
    const int rank = 2 + sa.nsp;
    if (x.rank != rank || y.rank != rank || y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1]) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: X and Y must be [N, C, %d spatial dims] alike "
                             "(ranks %d, %d)",
                             c.name, sa.nsp, x.rank, y.rank);
    }
    ps->planes = x.dims[0] * x.dims[1];
    set_window(sa, x, y, ps);
    for (int i = 0; i < sa.nsp; ++i) {
        const int a = 3 - sa.nsp + i;
        ps->pad_end[a] = sa.pad_end[a];
        const int64_t floor_len =
            window_out_len(ps->in[a], sa.kernel[a], sa.stride[a], sa.dilation[a], sa.pad[a], sa.pad_end[a]);
        if (ps->out[a] != floor_len && ps->out[a] != floor_len + 1) {
            return Status::error(StatusCode::shape_mismatch,
                                 "failed to run %s: output dim disagrees with the attributes "
                                 "(axis=%d, got=%lld, want=%lld)",
                                 c.name, i, static_cast<long long>(ps->out[a]),
                                 static_cast<long long>(floor_len));
        }
    }
    return Status::ok();
}

// MaxPool: input X [N, C, spatial...] (float32, float64, uint8, int8); outputs Y like X's dtype and
// optionally Indices (int64, same dims as Y).
// ints: [nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp], storage_order].
// float32 without Indices takes the row path (runtime/pool_run.h), split over output rows.
static Status max_pool(const OpCall& c, const PoolKernels* k) {
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 0, true, &sa));
    const int storage_order = static_cast<int>(c.int_at(sa.next, 0));
    PoolShape ps;
    FLEXPIPE_RETURN_IF_ERROR(pool_shape(c, sa, &ps));
    int64_t* indices = nullptr;
    if (c.n_out > 1 && c.out[1].present() && c.out[1].data != nullptr) {
        FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.out[1], DType::i64, c.name, "Indices"));
        FLEXPIPE_CHECK_ARG(same_dims(c.out[0], c.out[1]),
                           "failed to run MaxPool: Indices dims must equal Y dims");
        indices = c.out[1].as<int64_t>();
    }
    const TensorView& x = c.in[0];
    void* y = c.out[0].data;
    const int64_t planes = ps.planes;
    if (k != nullptr && x.dtype == DType::f32 && indices == nullptr && pool_rows_apply(ps)) {
        parallel_for(pool_rows(ps), c.threads, [&](int64_t b, int64_t e) {
            pool_rows_f32(*k, ps, PoolKind::max, x.as<float>(), static_cast<float*>(y), b, e);
        });
        return Status::ok();
    }
    if (!maxpool_dtype_supported(x.dtype)) {
        return Status::error(StatusCode::invalid_argument, "failed to run MaxPool: unsupported dtype %s",
                             dtype_name(x.dtype));
    }
    parallel_for(planes, c.threads, [&](int64_t b, int64_t e) {
        maxpool__ref(x.dtype, ps, x.data, y, indices, storage_order, b, e);
    });
    return Status::ok();
}

// AveragePool: input X [N, C, spatial...] float32; output Y.
// ints: [nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp], count_include_pad].
// Takes the row path (runtime/pool_run.h), split over output rows.
static Status average_pool(const OpCall& c, const PoolKernels* k) {
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[0], DType::f32, c.name, "X"));
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 0, true, &sa));
    const bool include_pad = c.int_at(sa.next, 0) != 0;
    PoolShape ps;
    FLEXPIPE_RETURN_IF_ERROR(pool_shape(c, sa, &ps));
    const float* x = c.in[0].as<float>();
    float* y = c.out[0].as<float>();
    if (k != nullptr && pool_rows_apply(ps)) {
        const PoolKind kind = include_pad ? PoolKind::avg_include_pad : PoolKind::avg_exclude_pad;
        parallel_for(pool_rows(ps), c.threads,
                     [&](int64_t b, int64_t e) { pool_rows_f32(*k, ps, kind, x, y, b, e); });
        return Status::ok();
    }
    parallel_for(ps.planes, c.threads,
                 [&](int64_t b, int64_t e) { avgpool_f32__ref(ps, x, y, include_pad, b, e); });
    return Status::ok();
}

// LpPool: input X [N, C, spatial...] float32; output Y.
// ints: [nsp, kernel[nsp], strides[nsp], dilations[nsp], pads_begin[nsp], pads_end[nsp]]; floats: [p].
Status op_lp_pool(const OpCall& c) {
    FLEXPIPE_RETURN_IF_ERROR(expect_dtype(c.in[0], DType::f32, c.name, "X"));
    SpatialAttrs sa;
    FLEXPIPE_RETURN_IF_ERROR(read_spatial(c, 0, true, &sa));
    const double p = c.float_at(0, 2.0);
    FLEXPIPE_CHECK_ARG(p > 0.0, "failed to run LpPool: p must be > 0 (p=%g)", p);
    PoolShape ps;
    FLEXPIPE_RETURN_IF_ERROR(pool_shape(c, sa, &ps));
    const float* x = c.in[0].as<float>();
    float* y = c.out[0].as<float>();
    parallel_for(ps.planes, c.threads, [&](int64_t b, int64_t e) { lppool_f32__ref(ps, x, y, p, b, e); });
    return Status::ok();
}

// Global pools: X [N, C, spatial...] float32 (rank >= 2); Y [N, C, 1, ...] (N * C elements).
// Kind 0 average, 1 max, 2 Lp; k chooses the plane kernels of average and max.
template <int Kind>
static Status global_pool(const OpCall& c, const PoolKernels* k) {
    const char* op = c.name;
    const TensorView& x = c.in[0];
    FLEXPIPE_RETURN_IF_ERROR(expect_f32(op, {{x, "X"}, {c.out[0], "Y"}}));
    if (x.rank < 2 || c.out[0].numel != x.dims[0] * x.dims[1]) {
        return Status::error(StatusCode::shape_mismatch,
                             "failed to run %s: Y must hold N * C values (got %lld)", op,
                             static_cast<long long>(c.out[0].numel));
    }
    const int64_t size = x.span(2, x.rank);
    const float* xd = x.as<float>();
    float* y = c.out[0].as<float>();
    const double p = c.float_at(0, 2.0);
    parallel_for(x.dims[0] * x.dims[1], c.threads, [&](int64_t b, int64_t e) {
        if (k != nullptr && Kind < 2)
            global_pool_f32(*k, Kind == 0, xd, y, size, b, e);
        else if (Kind == 0)
            global_avgpool_f32__ref(xd, y, size, b, e);
        else if (Kind == 1)
            global_maxpool_f32__ref(xd, y, size, b, e);
        else
            global_lppool_f32__ref(xd, y, size, p, b, e);
    });
    return Status::ok();
}

// GlobalAveragePool / GlobalMaxPool: no attributes. GlobalLpPool: floats [p].
Status op_global_average_pool(const OpCall& c) {
    return global_pool<0>(c, &kernels().pool);
}
Status op_global_max_pool(const OpCall& c) {
    return global_pool<1>(c, &kernels().pool);
}
Status op_global_lp_pool(const OpCall& c) {
    return global_pool<2>(c, nullptr);
}
Status op_max_pool(const OpCall& c) {
    return max_pool(c, &kernels().pool);
}
Status op_average_pool(const OpCall& c) {
    return average_pool(c, &kernels().pool);
}

Status pool_op_with(const char* name, const OpCall& c, const PoolKernels* k) {
    using Body = Status (*)(const OpCall&, const PoolKernels*);
    static const struct {
        const char* name;
        Body run;
    } ops[] = {
        {"MaxPool", max_pool},
        {"AveragePool", average_pool},
        {"GlobalAveragePool", global_pool<0>},
        {"GlobalMaxPool", global_pool<1>},
        {"Resize", resize_with},
    };
    for (const auto& op : ops) {
        if (std::strcmp(name, op.name) != 0) continue;
        const OpEntry& e = *find_op(name);
        FLEXPIPE_RETURN_IF_ERROR(check_arity(e, c));
        OpCall named = c;
        named.name = e.name;
        return op.run(named, k);
    }
    return Status::error(StatusCode::invalid_argument, "failed to run %s: not a pool or Resize op", name);
}

}  // namespace flexpipe
