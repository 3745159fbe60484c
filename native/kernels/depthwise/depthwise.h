// SPDX-License-Identifier: Apache-2.0
// Depthwise 3x3 convolution (group == in_channels == out_channels), float32, stride 1 or 2, any padding.
//
// Layout: x [batch, channels, h, w], y [batch, channels, oh, ow], w [channels, 1, 3, 3], dense row-major
// (y's planes may be y_plane floats apart instead: rows of larger planes).
//   y[n, c, oy, ox] = bias[c] + sum_{ky, kx < 3} w[c, ky, kx] * x[n, c, oy * s - pad_top + ky, ox * s - pad_left + kx]
// (taps in the padding read zero), then the fused activation. Work items are planes p = n * channels + c;
// callers split [0, batch * channels) over threads (in units of depthwise_plane_unit). SIMD variants
// vectorize along the output row: they copy small planes into a zero-padded stack buffer first
// (depthwise_padded.h: border columns need no special case) and compute large planes' border columns
// like __ref; AVX-512 vectorizes planes of at most 16 columns over 16 channels instead.
// Tolerance: 9 products per output; variants (FMA, one partial sum per kernel row) match __ref within
// 4 * 2^-20 * (sum |x * w| + |bias|).
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {

struct DepthwiseShape {
    int64_t channels = 1;
    int64_t h = 1, w = 1;    // input plane
    int64_t oh = 1, ow = 1;  // output plane
    int64_t stride = 1;      // 1 or 2 (both axes)
    int64_t pad_top = 0, pad_left = 0;
    int64_t y_plane = 0;     // floats from one output plane to the next; 0: oh * ow (dense)
    // depthwise_kxk only (the 3x3 variants require kh = kw = 3 and dilation = 1):
    int64_t kh = 3, kw = 3;  // kernel rows and columns
    int64_t dilation = 1;    // both axes
};

// Floats from one output plane to the next (a band of rows of larger planes: ConvDepthwise).
static inline int64_t depthwise_y_plane(const DepthwiseShape& s) { return s.y_plane > 0 ? s.y_plane : s.oh * s.ow; }

// Planes per work item for callers that split [0, batch * channels) over threads: the AVX-512 variant
// computes planes of at most 16 columns 16 at a time (the planes of a range left over from whole 16s
// take its per-plane path), so such planes are handed out in 16s.
static inline int64_t depthwise_plane_unit(const DepthwiseShape& s) { return s.w <= 16 && s.ow <= 16 ? 16 : 1; }

using DepthwiseFn = void (*)(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end);

void depthwise_f32_3x3__ref(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#if defined(__x86_64__) || defined(_M_X64)
void depthwise_f32_3x3__avx2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
void depthwise_f32_3x3__avx512(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                               const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#endif
#if defined(__aarch64__)
void depthwise_f32_3x3__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#endif

// Depthwise kh x kw with dilation (both axes), stride 1 or 2, any padding: MnasNet's, MobileNetV3's and
// EfficientNet's 5x5, ConvNeXt's 7x7, DeepLabV3's dilated 3x3. w [channels, 1, kh, kw].
//   y[n, c, oy, ox] = bias[c] + sum_{ky < kh, kx < kw} w[c, ky, kx] * x[n, c, oy*s - pad_top + ky*d, ox*s - pad_left + kx*d]
// Planes as above (work items are planes, handed out in units of depthwise_kxk_plane_unit). The SIMD variants
// (depthwise_kxk_impl.h, one template over simd/vec.h) copy a plane that fits into a zero-padded stack
// buffer (at stride 2 split into even- and odd-column planes) and vectorize along the output row, 4 rows
// at a time; planes of at most 2 L output columns go L at a time with the channels in the lanes (a
// zero-padded tile of L planes) when that tile fits; larger planes vectorize the interior in place and compute border columns like __ref;
// kernels of more than 64 taps run __ref.
// Tolerance: kh * kw products summed in another order (two FMA chains): within
// 4 * 2^-20 * (sum |x * w| + |bias|) of __ref for up to 64 taps.
// Output pixel (oy, ox) of plane xp before the activation, taps in the padding skipped: __ref's sum, and
// the SIMD variants' border pixels. wc: the channel's kh * kw weights.
static inline float depthwise_kxk_pixel(const DepthwiseShape& s, const float* xp, const float* wc, float b, int64_t oy,
                                        int64_t ox) {
    float acc = b;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.stride - s.pad_top + ky * s.dilation;
        if (iy < 0 || iy >= s.h) continue;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t ix = ox * s.stride - s.pad_left + kx * s.dilation;
            if (ix >= 0 && ix < s.w) acc += wc[ky * s.kw + kx] * xp[iy * s.w + ix];
        }
    }
    return acc;
}

void depthwise_f32_kxk__ref(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                            const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#if defined(__x86_64__) || defined(_M_X64)
void depthwise_f32_kxk__avx2(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
void depthwise_f32_kxk__avx512(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                               const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#endif
#if defined(__aarch64__)
void depthwise_f32_kxk__neon(const DepthwiseShape& s, const float* x, const float* w, const float* bias, float* y,
                             const ConvActivation& act, int64_t plane_begin, int64_t plane_end);
#endif

// Floats of a depthwise_kxk SIMD variant's stack scratch (64 KiB): the zero-padded plane copy, or the
// tile of L planes the channels-in-lanes path transposes its input into.
constexpr int64_t depthwise_kxk_scratch_floats = 16384;

// Output rows per band of the channels-in-lanes path for `lanes` planes at a time, 0 when the path does
// not apply: rows of at most 2 lanes output columns, a band's tile of input rows within the scratch,
// and at least 4 output rows per band unless one band holds the plane (a band of one or two rows
// would transpose its input rows several times over).
static inline int64_t depthwise_kxk_band(const DepthwiseShape& s, int64_t lanes) {
    if (s.ow > 2 * lanes) return 0;
    const int64_t cols = (s.ow - 1) * s.stride + (s.kw - 1) * s.dilation + 1;
    const int64_t reach = (s.kh - 1) * s.dilation + 1;  // input rows of one output row
    const int64_t fit = depthwise_kxk_scratch_floats / (cols * lanes);
    if (fit < reach) return 0;
    const int64_t band = (fit - reach) / s.stride + 1;
    if (band >= s.oh) return s.oh;
    return band >= 4 ? band : 0;
}

// Planes per work item for callers of depthwise_kxk: planes the channels-in-lanes path takes 16 at a
// time on AVX-512 (depthwise_kxk_impl.h; L planes on the other ISAs) are handed out in 16s.
static inline int64_t depthwise_kxk_plane_unit(const DepthwiseShape& s) { return depthwise_kxk_band(s, 16) > 0 ? 16 : 1; }

// The range [lo, hi) of output columns whose three taps all lie inside a row of width w.
static inline void depthwise_interior(const DepthwiseShape& s, int64_t* lo, int64_t* hi) {
    *lo = (s.pad_left + s.stride - 1) / s.stride;
    const int64_t last = s.w - 3 + s.pad_left;  // ox * stride <= last
    *hi = last < 0 ? 0 : last / s.stride + 1;
    if (*hi > s.ow) *hi = s.ow;
    if (*lo > *hi) *lo = *hi;
}

}  // namespace flexpipe
