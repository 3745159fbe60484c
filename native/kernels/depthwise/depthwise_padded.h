// SPDX-License-Identifier: Apache-2.0
// The zero-padded plane the SIMD depthwise variants copy small planes into (see depthwise.h): every
// output column of the copy is an interior one, so a row is L-wide vector steps with no border case.
//
// Scratch row r is input row r - pad_top and scratch column q is input column q - pad_left; rows and
// columns outside the input are zero. The copy needs rows x cols floats (on the stack, at most
// capacity); planes that do not fit keep the in-place path.
#pragma once

#include <cstdint>

#include "kernels/depthwise/depthwise.h"

namespace flexpipe {
namespace {  // internal to each translation unit: every SIMD file compiles its own copy (STYLE.md §3)

struct PaddedPlane {
    static constexpr int64_t capacity = 16384;  // floats: 64 KiB on the stack
    int64_t rows = 0, cols = 0;                 // cols is a multiple of L; rows = 0: does not fit
    int64_t iy0 = 0, iy1 = 0;                   // input rows copied (the rest of the scratch stays zero)
    int64_t ix0 = 0, ix1 = 0;                   // input columns copied
};

// The geometry for L-lane steps. The last step of a row reads columns up to (L chunks - 1) stride + 2
// (stride 2 reads 2 L + 1 columns from its first); a row narrower than L is copied with one L-wide
// store, so the scratch has room for it.
template <int L>
inline PaddedPlane padded_plane(const DepthwiseShape& s) {
    PaddedPlane g;
    const int64_t chunks = (s.ow + L - 1) / L;
    g.rows = (s.oh - 1) * s.stride + 3;
    const int64_t need = (chunks * L - 1) * s.stride + 3;
    const int64_t copied = s.pad_left + (s.w < L ? L : s.w);
    const int64_t wide = copied > need ? copied : need;
    g.cols = (wide + L - 1) / L * L;
    if (g.rows * g.cols > PaddedPlane::capacity) {
        g.rows = 0;
        return g;
    }
    g.iy0 = s.pad_top < 0 ? -s.pad_top : 0;
    g.iy1 = g.rows - s.pad_top < s.h ? g.rows - s.pad_top : s.h;
    g.ix0 = s.pad_left < 0 ? -s.pad_left : 0;  // ONNX pads are >= 0; kept general
    g.ix1 = g.cols - s.pad_left < s.w ? g.cols - s.pad_left : s.w;
    return g;
}

// The first output column of step ox: the row's partial last step overlaps the previous one when
// the row has at least L columns.
template <int L>
inline int64_t padded_step_at(const DepthwiseShape& s, int64_t ox) {
    return ox + L > s.ow && s.ow >= L ? s.ow - L : ox;
}

// Whether L outputs of row oy starting at column at may be stored whole: inside the row, or a row
// narrower than L whose spill stays inside the plane (the rows it overwrites are computed later).
template <int L>
inline bool padded_store_whole(const DepthwiseShape& s, int64_t oy, int64_t at) {
    return at + L <= s.ow || oy * s.ow + L <= s.oh * s.ow;
}

// Copies plane xp into the scratch pad (its zero padding written once per call by the caller):
// copy_row(dst, src, n) copies n floats of one input row.
template <typename CopyRow>
inline void padded_copy_in(const DepthwiseShape& s, const PaddedPlane& g, const float* xp, float* pad,
                           CopyRow copy_row) {
    for (int64_t iy = g.iy0; iy < g.iy1; ++iy)
        copy_row(pad + (iy + s.pad_top) * g.cols + g.ix0 + s.pad_left, xp + iy * s.w + g.ix0, g.ix1 - g.ix0);
}

// Walks the output steps of one padded plane: at stride 1 two rows at a time, two(r0, oy, at) for
// rows oy and oy + 1 from scratch rows r0 .. r0 + 3; then (stride 2, or the last row) one row at a
// time, one(r0, oy, at) from scratch rows r0 .. r0 + 2. at is the step's first output column.
template <int L, typename Two, typename One>
inline void padded_rows(const DepthwiseShape& s, const PaddedPlane& g, const float* pad, Two two, One one) {
    int64_t oy = 0;
    if (s.stride == 1) {
        for (; oy + 2 <= s.oh; oy += 2)
            for (int64_t ox = 0; ox < s.ow; ox += L) two(pad + oy * g.cols, oy, padded_step_at<L>(s, ox));
    }
    for (; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ox += L) one(pad + oy * s.stride * g.cols, oy, padded_step_at<L>(s, ox));
}

}  // namespace
}  // namespace flexpipe
