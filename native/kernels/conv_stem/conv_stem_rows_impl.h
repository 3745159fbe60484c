// SPDX-License-Identifier: Apache-2.0
// The stem convolution by rows (conv_stem_rows.h), the parts every variant shares: the thread's ring of
// de-interleaved input rows, the row driver, and the channel blocks written once over a vector type
// (simd/vec.h) that conv_stem_rows_f32__avx2 and __neon instantiate.
//
// A block is R <= 6 output channels by 16 output columns (16 / L vectors of L = Vec::lanes lanes: 12
// accumulators on AVX2, 24 of NEON's 32 registers); per tap (c, kh, kw) 16 / L loads of a de-interleaved
// input row feed R broadcast weights, one FMA each. Rows then take blocks of L columns and a last block
// of fewer, computed whole (the ring rows are zero-padded past the output width, so its loads stay inside
// them) and stored through store_first. The AVX-512 variant keeps its own 8 x 32 blocks (its file says
// why) on the same ring and driver.
//
// Everything here has internal linkage (anonymous namespace): each translation unit, __ref included,
// compiles its own copy with its own flags (STYLE.md §3).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/conv_stem/conv_stem_rows.h"

namespace flexpipe {
namespace {

// Copies every other float: d[i] = src[2 i] for i < n, reading nothing past src[2 n - 2] (the input
// row may end there). The column phases of a stride-2 row; variants pass stem_gather2<Vec> to stem_run.
using StemGather2Fn = void (*)(float* d, const float* src, int64_t n);
inline void stem_gather2_scalar(float* d, const float* src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) d[i] = src[2 * i];
}

// The ring of one thread: the input rows of output row oh are present once advance(oh) returned.
struct StemRing {
    const ConvShape* s = nullptr;
    const float* x = nullptr;  // image n, channel 0
    float* buf = nullptr;      // StemGeometry::floats
    StemGeometry g;
    int64_t filled = INT64_MIN;  // the highest input row present
    StemGather2Fn gather2 = stem_gather2_scalar;

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
struct StemBlockArgs {
    const float* const* rows;  // StemRing::row_pointers
    const int64_t* koff;       // StemRing::tap_offsets
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
inline void stem_channel_block(int64_t r, int64_t m, Block& block) {
    if constexpr (Max > 1) {
        if (r < Max) return stem_channel_block<Max - 1>(r, m, block);
    }
    block(m, std::integral_constant<int, Max>{});
}

// The entry the SIMD variants share: for each output row [row_begin, row_end) of batch * OH rows,
// makes its input rows present in the thread's ring, then calls channels(a, std::integral_constant<int,
// R>{}) for the blocks of R <= MaxR output channels that cover [0, M) (R = MaxR but for the last), with
// a set for that row and block. With PrefetchRows, it first prefetches the next output row of every
// channel for writing; a variant whose blocks prefetch their own (a.next) passes false.
template <int MaxR, bool PrefetchRows, typename Channels>
inline void stem_run(const ConvShape& s, const float* x, const float* w, const float* bias, const ConvActivation& act,
                     float* y, float* ring, int64_t row_begin, int64_t row_end, Channels&& channels,
                     StemGather2Fn gather2 = stem_gather2_scalar) {
    const int64_t OH = s.out[1], OW = s.out[2], M = s.out_channels;
    StemRing rr;
    rr.s = &s;
    rr.buf = ring;
    rr.g = stem_geometry(s);
    rr.gather2 = gather2;
    int64_t koff[stem_max_kernel];
    rr.tap_offsets(koff);
    const float* rows[4 * stem_max_kernel];
    StemBlockArgs a{rows, koff, nullptr, nullptr, nullptr, s.in_channels * s.kernel[1] * s.kernel[2], OH * OW, 0,
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
            channels(static_cast<const StemBlockArgs&>(a), r);
        };
        for (int64_t m = 0; m < M; m += MaxR) stem_channel_block<MaxR>(M - m < MaxR ? M - m : MaxR, m, block);
    }
}

template <class Vec, int R, int NV>
inline void stem_block(const StemBlockArgs& a, const ConvShape& s, int64_t ow, int64_t tail) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes;
    const int64_t C = s.in_channels, KH = s.kernel[1], KW = s.kernel[2];
    V acc[R][NV];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = Vec::set1(a.bias ? a.bias[r] : 0.0f);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t t0 = (c * KH + kh) * KW;
            const float* xr = a.rows[c * KH + kh] + ow;
            for (int64_t kw = 0; kw < KW; ++kw) {
                const float* xp = xr + a.koff[kw];
                V xv[NV];
                for (int v = 0; v < NV; ++v) xv[v] = Vec::load(xp + L * v);
                for (int r = 0; r < R; ++r) {
                    const V wv = Vec::load1(a.w + r * a.T + t0 + kw);
                    for (int v = 0; v < NV; ++v) acc[r][v] = Vec::fma(wv, xv[v], acc[r][v]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int v = 0; v < NV; ++v) {
            V o = acc[r][v];
            if (a.clamp) o = Vec::clamp(o, Vec::set1(a.lo), Vec::set1(a.hi));  // NaN and -0 pass, as __ref
            float* yp = a.y + r * a.plane + ow + L * v;
            if (tail == L) Vec::store(yp, o);
            else Vec::store_first(yp, tail, o);
        }
    }
}

template <class Vec, int R>
void stem_channels(const StemBlockArgs& a, const ConvShape& s) {
    constexpr int L = Vec::lanes;
    const int64_t OW = s.out[2];
    int64_t ow = 0;
    for (; ow + 16 <= OW; ow += 16) stem_block<Vec, R, 16 / L>(a, s, ow, L);
    for (; ow + L <= OW; ow += L) stem_block<Vec, R, 1>(a, s, ow, L);
    if (ow < OW) stem_block<Vec, R, 1>(a, s, ow, OW - ow);
}

// d[i] = src[2 i]: the even lanes of 2 L floats, L at a time while the load ends before src[2 n - 1]
// (never read), the rest one by one.
template <class Vec>
void stem_gather2(float* d, const float* src, int64_t n) {
    constexpr int L = Vec::lanes;
    int64_t i = 0;
    for (; i + L < n; i += L) Vec::store(d + i, Vec::load_evens(src + 2 * i));
    for (; i < n; ++i) d[i] = src[2 * i];
}

template <class Vec>
void conv_stem_rows_vec(const ConvShape& s, const float* x, const float* w, const float* bias,
                        const ConvActivation& act, float* y, float* ring, int64_t row_begin, int64_t row_end) {
    stem_run<6, true>(
        s, x, w, bias, act, y, ring, row_begin, row_end,
        [&](const StemBlockArgs& a, auto r) { stem_channels<Vec, decltype(r)::value>(a, s); }, stem_gather2<Vec>);
}

}  // namespace
}  // namespace flexpipe
