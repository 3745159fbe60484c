// SPDX-License-Identifier: Apache-2.0
// The traversal shared by the im2col variants (layout in im2col.h): for every column-matrix row k and
// every run of output columns that stays in one output row and one packed panel, the run's input
// pixels are copied (zeros where the run covers padding). Variants differ only in copy_inside (the SIMD
// ones pass im2col_copy_vec<Vec>):
//
//   copy_inside(d, a, src, l, h, sw, off, row_len) -> m: sets d[ow - a] = src[ow * sw + off] for ow in
//   [l, m) with vector loads that stay inside src[0, row_len) (the input row), for the m it chooses
//   (l <= m <= h); the walk copies [m, h) one by one.
#pragma once

#include <cstdint>

#include "common/macros.h"
#include "kernels/im2col/im2col.h"

namespace flexpipe {
namespace {  // internal to each translation unit: the SIMD files compile their own copy (STYLE.md §3)

// The part of run [a, b) whose input pixels exist: [l, h) (empty when src is null).
inline void im2col_inside(const float* src, int64_t a, int64_t b, int64_t lo, int64_t hi, int64_t* l, int64_t* h) {
    *l = src ? (lo < a ? a : (lo > b ? b : lo)) : b;
    *h = src ? (hi > b ? b : (hi < *l ? *l : hi)) : b;
}

// d[ow - a] for ow in [a, b): src[ow * sw + off] where ow is in [lo, hi), else 0 (src null: all 0).
template <typename CopyInside>
inline void im2col_fill_run(float* d, const float* src, int64_t a, int64_t b, int64_t lo, int64_t hi, int64_t sw,
                            int64_t off, int64_t row_len, CopyInside& copy_inside) {
    int64_t l, h;
    im2col_inside(src, a, b, lo, hi, &l, &h);
    for (int64_t ow = a; ow < l; ++ow) d[ow - a] = 0.0f;
    int64_t ow = l < h ? copy_inside(d, a, src, l, h, sw, off, row_len) : h;
    for (; ow < h; ++ow) d[ow - a] = src[ow * sw + off];
    for (ow = h; ow < b; ++ow) d[ow - a] = 0.0f;
}

// The copy_inside of the SIMD variants over a vector type (simd/vec.h): L = Vec::lanes pixels per step,
// stride 1 as plain loads, stride 2 as the even lanes of 2 L floats (load_evens), which must end inside
// the row. Other strides are left to the walk's scalar copy.
template <class Vec>
int64_t im2col_copy_vec(float* d, int64_t a, const float* src, int64_t l, int64_t h, int64_t sw, int64_t off,
                        int64_t row_len) {
    constexpr int L = Vec::lanes;
    int64_t ow = l;
    if (sw == 1) {
        for (; ow + L <= h; ow += L) Vec::store(d + ow - a, Vec::load(src + ow + off));
    } else if (sw == 2) {
        for (; ow + L <= h && 2 * ow + off + 2 * L <= row_len; ow += L) Vec::store(d + ow - a, Vec::load_evens(src + 2 * ow + off));
    }
    return ow;
}

template <typename CopyInside>
inline void im2col_walk(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                        float* col, int64_t k_begin, int64_t k_end, CopyInside copy_inside) {
    FLEXPIPE_DCHECK(p0 <= p1 && nr >= 1);
    const int64_t kw_n = s.kernel[2], kh_n = s.kernel[1], kd_n = s.kernel[0], K = channels * kd_n * kh_n * kw_n;
    const int64_t ow_n = s.out[2], oh_n = s.out[1];
    const int64_t plane = s.in[0] * s.in[1] * s.in[2], sw = s.stride[2];
    for (int64_t k = k_begin; k < k_end; ++k) {
        const int64_t kw = k % kw_n, kh = k / kw_n % kh_n, kd = k / (kw_n * kh_n) % kd_n, c = k / (kw_n * kh_n * kd_n);
        FLEXPIPE_DCHECK(c < channels);
        // Input column iw = ow * sw + off is inside the row for ow in [lo, hi).
        const int64_t off = kw * s.dilation[2] - s.pad[2];
        const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        const int64_t hi = s.in[2] - 1 - off < 0 ? 0 : (s.in[2] - 1 - off) / sw + 1;
        // Walk runs of output columns [ow0, ow1) in one output row, cut at panel boundaries, keeping
        // the position (row, ow0, panel, lane) incrementally: no division per run.
        int64_t ow0 = p0 % ow_n, row = p0 / ow_n, oh = row % oh_n, od = row / oh_n;
        int64_t lane = 0;
        float* panel = col + k * nr;
        const float* src = nullptr;
        bool src_valid = false;
        for (int64_t p = p0; p < p1;) {
            if (!src_valid) {
                const int64_t id = od * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                const int64_t ih = oh * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                const bool in = id >= 0 && id < s.in[0] && ih >= 0 && ih < s.in[1];
                src = in ? x + c * plane + (id * s.in[1] + ih) * s.in[2] : nullptr;
                src_valid = true;
            }
            int64_t ow1 = ow0 + (p1 - p) < ow_n ? ow0 + (p1 - p) : ow_n;
            if (ow1 - ow0 > nr - lane) ow1 = ow0 + nr - lane;
            im2col_fill_run(panel + lane, src, ow0, ow1, lo, hi, sw, off, s.in[2], copy_inside);
            p += ow1 - ow0;
            lane += ow1 - ow0;
            if (lane == nr) lane = 0, panel += K * nr;
            ow0 = ow1;
            if (ow0 == ow_n) {
                ow0 = 0;
                src_valid = false;
                if (++oh == oh_n) oh = 0, ++od;
            }
        }
    }
}

}  // namespace
}  // namespace flexpipe
