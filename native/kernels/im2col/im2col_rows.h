// SPDX-License-Identifier: Apache-2.0
// im2col by rows, for convolutions with few input channels (network stems: 3 -> 16..64 channels, 3x3 or
// 7x7, stride 2). Their im2col matrix has only K = C * KH * KW rows (27 for a 3x3 stem), so a GEMM over
// it spends its time on packing and on C-tile traffic, not on multiply-adds. Here the column matrix is
// never built: for each output row, the im2col row (c, kh, kw) is a contiguous run of a
// de-interleaved input row, and the kernel multiplies those runs in registers.
//
// Input rows: the input row ih of channel c is split by column phase q < sw into
//     phase(c, ih, q)[j] = x[c, ih, j * sw + q - pw]        (0 outside the image, and for rows outside it)
// so that, for output row oh and kh, kw with ih = oh * sh - ph + kh,
//     x[c, ih, ow * sw - pw + kw] = phase(c, ih, kw % sw)[ow + kw / sw]
// a unit-stride run over ow: one vector load per 8 (AVX2) or 4 (NEON) output columns, no permutes, no
// borders. Each thread keeps a ring of KH de-interleaved rows per channel and advances it by sh rows per
// output row, so every input row is split once per thread.
//
// Then, per output row and block of output channels, y[m, oh, ow] = act(bias[m] + sum over (c, kh, kw)
// of w[m, c, kh, kw] * phase(...)[...]) in the order c, kh, kw (weights read in place, ONNX layout).
// Applies to 2-D convolutions with groups 1 and dilation 1 (rows_applies); work items are output rows
// (n, oh) of all output channels. Tolerance: the variants sum in the same order as __ref with FMA.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/conv/conv.h"

namespace flexpipe {

struct RowsGeometry {
    int64_t panel = 0;   // floats per phase row: >= round_up(OW, 8) + (KW - 1) / sw, a multiple of 8
    int64_t ring = 0;    // rows kept per channel (KH)
    int64_t floats = 0;  // per-thread ring floats: C * ring * sw * panel
};

constexpr int64_t rows_max_kernel = 16;

inline bool rows_applies(const ConvShape& s) {
    return s.groups == 1 && s.kernel[0] == 1 && s.in[0] == 1 && s.out[0] == 1 && s.dilation[1] == 1 &&
           s.dilation[2] == 1 && s.in_channels <= 4 && s.kernel[1] <= rows_max_kernel &&
           s.kernel[2] <= rows_max_kernel && s.stride[2] <= 4;
}

inline RowsGeometry rows_geometry(const ConvShape& s) {
    RowsGeometry g;
    const int64_t ow8 = (s.out[2] + 7) / 8 * 8;
    g.panel = (ow8 + (s.kernel[2] - 1) / s.stride[2] + 7) / 8 * 8;
    g.ring = s.kernel[1];
    g.floats = s.in_channels * g.ring * s.stride[2] * g.panel;
    return g;
}

// Copies every other float: d[i] = src[2 i] for i < n, reading nothing past src[2 n - 2] (the input
// row may end there). The column phases of a stride-2 row; variants pass a vector one to rows_run.
using RowsGather2Fn = void (*)(float* d, const float* src, int64_t n);
inline void rows_gather2_scalar(float* d, const float* src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) d[i] = src[2 * i];
}

// The ring of one thread: rows [lo, hi] of the image are present once rows_advance(lo, hi) returned.
struct RowsRing {
    const ConvShape* s = nullptr;
    const float* x = nullptr;  // image n, channel 0
    float* buf = nullptr;      // RowsGeometry::floats
    RowsGeometry g;
    int64_t filled = INT64_MIN;  // the highest input row present
    RowsGather2Fn gather2 = rows_gather2_scalar;

    // Phase q of input row ih of channel c (ih in the window of the current output row).
    float* phase(int64_t c, int64_t ih, int64_t q) const {
        const int64_t slot = ((ih % g.ring) + g.ring) % g.ring;
        return buf + ((c * g.ring + slot) * s->stride[2] + q) * g.panel;
    }

    void fill(int64_t ih) {
        const int64_t sw = s->stride[2], W = s->in[2], pw = s->pad[2];
        for (int64_t c = 0; c < s->in_channels; ++c) {
            for (int64_t q = 0; q < sw; ++q) {
                float* d = phase(c, ih, q);
                if (ih < 0 || ih >= s->in[1]) {
                    std::memset(d, 0, sizeof(float) * g.panel);
                    continue;
                }
                const float* r = x + (c * s->in[1] + ih) * W;
                // Columns j with 0 <= j * sw + q - pw < W are copied, the rest are zero.
                const int64_t j0 = pw - q <= 0 ? 0 : (pw - q + sw - 1) / sw;
                int64_t j1 = W + pw - q <= 0 ? 0 : (W + pw - q + sw - 1) / sw;
                if (j1 > g.panel) j1 = g.panel;
                int64_t j = 0;
                for (; j < j0 && j < g.panel; ++j) d[j] = 0.0f;
                if (sw == 1) {
                    if (j1 > j) std::memcpy(d + j, r + j + q - pw, sizeof(float) * (j1 - j));
                    j = j1 > j ? j1 : j;
                } else if (sw == 2) {
                    if (j1 > j) gather2(d + j, r + q - pw + 2 * j, j1 - j);
                    j = j1 > j ? j1 : j;
                } else {
                    const float* src = r + q - pw;
                    for (; j < j1; ++j) d[j] = src[j * sw];
                }
                for (; j < g.panel; ++j) d[j] = 0.0f;
            }
        }
    }

    // Pointers to phase 0 of the KH input rows of output row oh, per channel: rows[c * KH + kh]; and the
    // offset of tap kw inside them: koff[kw] = (kw % sw) * panel + kw / sw.
    void row_pointers(int64_t oh, const float** rows) const {
        const int64_t ih0 = oh * s->stride[1] - s->pad[1];
        for (int64_t c = 0; c < s->in_channels; ++c)
            for (int64_t kh = 0; kh < s->kernel[1]; ++kh) rows[c * s->kernel[1] + kh] = phase(c, ih0 + kh, 0);
    }
    void tap_offsets(int64_t* koff) const {
        for (int64_t kw = 0; kw < s->kernel[2]; ++kw) koff[kw] = (kw % s->stride[2]) * g.panel + kw / s->stride[2];
    }

    // Makes the input rows of output row oh present.
    void advance(int64_t oh) {
        const int64_t lo = oh * s->stride[1] - s->pad[1], hi = lo + s->kernel[1] - 1;
        for (int64_t ih = (filled + 1 > lo ? filled + 1 : lo); ih <= hi; ++ih) fill(ih);
        filled = hi;
    }
};

// What a SIMD variant's block of output channels reads and writes.
struct RowsBlockArgs {
    const float* const* rows;  // RowsRing::row_pointers
    const int64_t* koff;       // RowsRing::tap_offsets
    const float* w;            // first output channel of the block
    const float* bias;         // its bias, or null
    float* y;                  // output row oh of the block's first channel
    int64_t T, plane;          // weights per channel (C KH KW), floats per output channel (OH OW)
    int64_t next;              // OW when row oh + 1 follows in the same planes (y + next), else 0
    float lo, hi;              // clamp bounds, used when clamp
    bool clamp;
};

// block(m, std::integral_constant<int, R>{}) for the R (1..Max) channels at m.
template <int Max, typename Block>
inline void rows_channel_block(int64_t r, int64_t m, Block& block) {
    if constexpr (Max > 1) {
        if (r < Max) return rows_channel_block<Max - 1>(r, m, block);
    }
    block(m, std::integral_constant<int, Max>{});
}

// The entry the SIMD variants share: for each output row [row_begin, row_end) of batch * OH rows,
// makes its input rows present in the thread's ring, then calls channels(a, std::integral_constant<int,
// R>{}) for the blocks of R <= MaxR output channels that cover [0, M) (R = MaxR but for the last), with
// a set for that row and block. With PrefetchRows, it first prefetches the next output row of every
// channel for writing; a variant whose blocks prefetch their own (a.next) passes false.
template <int MaxR, bool PrefetchRows, typename Channels>
inline void rows_run(const ConvShape& s, const float* x, const float* w, const float* bias, const ConvActivation& act,
                     float* y, float* ring, int64_t row_begin, int64_t row_end, Channels&& channels,
                     RowsGather2Fn gather2 = rows_gather2_scalar) {
    const int64_t OH = s.out[1], OW = s.out[2], M = s.out_channels;
    RowsRing rr;
    rr.s = &s;
    rr.buf = ring;
    rr.g = rows_geometry(s);
    rr.gather2 = gather2;
    int64_t koff[rows_max_kernel];
    rr.tap_offsets(koff);
    const float* rows[4 * rows_max_kernel];
    RowsBlockArgs a{rows, koff, nullptr, nullptr, nullptr, s.in_channels * s.kernel[1] * s.kernel[2], OH * OW, 0,
                    act.lo, act.hi, act.clamp};
    int64_t image = -1;
    for (int64_t row = row_begin; row < row_end; ++row) {
        const int64_t n = row / OH, oh = row % OH;
        if (n != image) {
            image = n;
            rr.x = x + n * s.in_channels * s.in[1] * s.in[2];
            rr.filled = INT64_MIN;
        }
        rr.advance(oh);
        rr.row_pointers(oh, rows);
        a.next = oh + 1 < OH ? OW : 0;
        if (PrefetchRows && oh + 1 < OH) {
            // The next row's output lines, one per plane, prefetched for writing: a stem writes a row of
            // every output channel in turn, more streams than the hardware prefetchers follow, so each
            // line was read for ownership on the stores' critical path. SqueezeNet's stem (3x3 s2
            // 3->64, 111x111 out, first op of the model, cold output): 0.90-1.19 -> 0.65-0.73 ms, one
            // thread, AVX-512 Xeon, five alternated process pairs (onnxruntime: 0.52 ms).
            for (int64_t m = 0; m < M; ++m) {
                const float* next = y + ((n * M + m) * OH + oh + 1) * OW;
                for (int64_t j = 0; j < OW; j += 16) __builtin_prefetch(next + j, 1, 3);
            }
        }
        auto block = [&](int64_t m, auto r) {
            a.w = w + m * a.T;
            a.bias = bias ? bias + m : nullptr;
            a.y = y + ((n * M + m) * OH + oh) * OW;
            channels(static_cast<const RowsBlockArgs&>(a), r);
        };
        for (int64_t m = 0; m < M; m += MaxR) rows_channel_block<MaxR>(M - m < MaxR ? M - m : MaxR, m, block);
    }
}

// Output rows [row_begin, row_end) of batch * OH rows, every output channel; ring: RowsGeometry::floats.
using Im2colRowsFn = void (*)(const ConvShape& s, const float* x, const float* w, const float* bias,
                              const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
void im2col_rows_f32__ref(const ConvShape& s, const float* x, const float* w, const float* bias,
                          const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
#if defined(__x86_64__) || defined(_M_X64)
void im2col_rows_f32__avx2(const ConvShape& s, const float* x, const float* w, const float* bias,
                           const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
void im2col_rows_f32__avx512(const ConvShape& s, const float* x, const float* w, const float* bias,
                             const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
#endif
#if defined(__aarch64__)
void im2col_rows_f32__neon(const ConvShape& s, const float* x, const float* w, const float* bias,
                           const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end);
#endif

}  // namespace flexpipe
