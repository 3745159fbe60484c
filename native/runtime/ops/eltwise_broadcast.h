// SPDX-License-Identifier: Apache-2.0
// The numpy-broadcasting driver of the elementwise ops: collapses dims, walks rows, splits threads.
//
// How it works: each input gets the strides it has when viewed through broadcasting at the output's
// dims (0 where it is broadcast). Output dims of size 1 are dropped, and neighbouring dims merge
// whenever every input walks them as one (outer stride == inner stride * inner size: both dense, or
// both broadcast), so [N,C,H,W] + [1,C,1,1] becomes three dims and equal shapes become one. The
// innermost remaining dim is a row: every input's stride there is 0 or 1, which is exactly what the
// row kernels of kernels/eltwise take. A run covers the output's flat index range in contiguous
// chunks, one per thread; a chunk may start and end inside a row.
#pragma once

#include <cstdint>

#include "runtime/op_call.h"
#include "runtime/ops/op_helpers.h"
#include "runtime/parallel.h"

namespace flexpipe {

constexpr int bcast_max_inputs = 3;
// Below this many elements per thread, extra threads cost more than they save.
constexpr int64_t eltwise_grain = int64_t{1} << 15;

struct Broadcast {
    int rank = 0;  // >= 1 after broadcast_plan
    int n_in = 0;
    int64_t dims[max_rank] = {0};
    int64_t strides[bcast_max_inputs][max_rank] = {{0}};

    int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
};

// Plans the walk of `out` for inputs `ins` (n_in <= bcast_max_inputs). False if an input does not
// broadcast to out's dims.
inline bool broadcast_plan(const TensorView* const* ins, int n_in, const TensorView& out, Broadcast& b) {
    int64_t full[bcast_max_inputs][max_rank];
    if (n_in < 1 || n_in > bcast_max_inputs || out.rank < 0 || out.rank > max_rank) return false;
    for (int k = 0; k < n_in; ++k) {
        if (ins[k]->rank < 0 || ins[k]->rank > max_rank) return false;
        if (!broadcast_strides(*ins[k], out, full[k])) return false;
    }
    b.rank = 0;
    b.n_in = n_in;
    for (int i = 0; i < out.rank; ++i) {
        const int64_t d = out.dims[i];
        if (d == 1) continue;
        bool merge = b.rank > 0;
        for (int k = 0; k < n_in && merge; ++k) merge = b.strides[k][b.rank - 1] == full[k][i] * d;
        if (merge) {
            b.dims[b.rank - 1] *= d;
            for (int k = 0; k < n_in; ++k) b.strides[k][b.rank - 1] = full[k][i];
        } else {
            b.dims[b.rank] = d;
            for (int k = 0; k < n_in; ++k) b.strides[k][b.rank] = full[k][i];
            ++b.rank;
        }
    }
    if (b.rank == 0) {
        b.rank = 1;
        b.dims[0] = 1;
        for (int k = 0; k < n_in; ++k) b.strides[k][0] = 0;
    }
    return true;
}

// Calls row(in_offsets, out_offset, n) for the rows covering output elements [begin, end); offsets
// are in elements, in_offsets has one entry per input.
template <typename Row>
void broadcast_rows(const Broadcast& b, int64_t begin, int64_t end, Row&& row) {
    int64_t idx[max_rank];
    int64_t off[bcast_max_inputs];
    int64_t rem = begin;
    for (int i = b.rank - 1; i >= 0; --i) {
        idx[i] = rem % b.dims[i];
        rem /= b.dims[i];
    }
    const int last = b.rank - 1;
    int64_t pos = begin;
    while (pos < end) {
        for (int k = 0; k < b.n_in; ++k) {
            int64_t o = 0;
            for (int i = 0; i < b.rank; ++i) o += idx[i] * b.strides[k][i];
            off[k] = o;
        }
        const int64_t left = b.dims[last] - idx[last];
        const int64_t n = left < end - pos ? left : end - pos;
        row(static_cast<const int64_t*>(off), pos, n);
        pos += n;
        idx[last] += n;
        for (int i = last; i > 0 && idx[i] == b.dims[i]; --i) {
            idx[i] = 0;
            ++idx[i - 1];
        }
    }
}

// Splits [0, numel) over up to `threads` threads (at least eltwise_grain elements each) and calls
// row() as broadcast_rows does.
template <typename Row>
void broadcast_run(const Broadcast& b, int64_t numel, int threads, Row&& row) {
    if (numel <= 0) return;
    int64_t chunks = numel / eltwise_grain;
    if (chunks > threads) chunks = threads;
    if (chunks < 1) chunks = 1;
    parallel_for(chunks, static_cast<int>(chunks), [&](int64_t c0, int64_t c1) {
        broadcast_rows(b, numel * c0 / chunks, numel * c1 / chunks, row);
    });
}

// Splits a dense range [0, numel) into contiguous chunks over threads: fn(begin, end).
template <typename Fn>
void dense_run(int64_t numel, int threads, Fn&& fn) {
    if (numel <= 0) return;
    int64_t chunks = numel / eltwise_grain;
    if (chunks > threads) chunks = threads;
    if (chunks < 1) chunks = 1;
    parallel_for(chunks, static_cast<int>(chunks),
                 [&](int64_t c0, int64_t c1) { fn(numel * c0 / chunks, numel * c1 / chunks); });
}

}  // namespace flexpipe
