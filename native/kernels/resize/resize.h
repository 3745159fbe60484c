// SPDX-License-Identifier: Apache-2.0
// Resize (ONNX Resize 10-13 / Upsample) kernel for float32: nearest, n-linear and n-cubic over any axes.
//
// Each output coordinate x along an axis maps to a source coordinate x_ori (coordinate
// transformation mode, e.g. half_pixel: (x + 0.5) / scale - 0.5), then to a few taps (index, weight):
// nearest 1 tap (rounded per nearest_mode), linear 2 taps (floor, floor + 1), cubic 4 taps
// (floor - 1 .. floor + 2) with Keys' kernel parameter cubic_a. Tap indices are clamped to the input
// (edge padding); with exclude_outside the weights of outside taps are zeroed and the rest
// renormalized. Taps with weight 0 are dropped, so identity axes (scale 1) cost one tap. The output
// is the sum over the product of the per-axis taps. tf_crop_and_resize maps through the roi and
// writes extrapolation_value where x_ori leaves [0, in - 1] on any axis.
// As in the ONNX reference, `length_resized` is in * scale (not rounded) when scales were given and
// the output size when sizes were given; it is what align_corners and tf_crop_and_resize divide by.
// Work split: one output row = every axis but the last; callers split row ranges over threads.
#pragma once

#include <cstdint>

namespace flexpipe {

enum class ResizeMode : int32_t { nearest = 0, linear = 1, cubic = 2 };
enum class ResizeCoord : int32_t {
    half_pixel = 0,
    asymmetric = 1,
    pytorch_half_pixel = 2,
    tf_half_pixel_for_nn = 3,
    align_corners = 4,
    tf_crop_and_resize = 5,
    half_pixel_symmetric = 6,
};
// simple: Resize-10 / Upsample rule (floor when upsampling, ceil when downsampling).
enum class ResizeNearest : int32_t {
    round_prefer_floor = 0,
    round_prefer_ceil = 1,
    floor = 2,
    ceil = 3,
    simple = 4,
};

constexpr int resize_max_rank = 8;
constexpr int resize_max_combos = 1024;  // product of tap counts over all axes but the last

struct ResizeAxis {
    int64_t in = 1;
    int64_t out = 1;
    double scale = 1.0;
    double length_resized = 1.0;
    double roi_start = 0.0;
    double roi_end = 1.0;
};

struct ResizeParams {
    int rank = 0;
    ResizeAxis axis[resize_max_rank];
    ResizeMode mode = ResizeMode::nearest;
    ResizeCoord coord = ResizeCoord::half_pixel;
    ResizeNearest nearest = ResizeNearest::round_prefer_floor;
    bool exclude_outside = false;
    double cubic_a = -0.75;
    float extrapolation_value = 0.0f;
};

// Taps of output coordinate o along axis a: writes up to 4 (index, weight) pairs and returns their
// count, or -1 when the coordinate is outside the roi (tf_crop_and_resize). Exposed so the op can
// bound the number of tap combinations before running the kernel.
int resize_axis_taps(const ResizeParams& p, int a, int64_t o, int64_t* idx, double* w);

// Output rows [row_begin, row_end) (a row is one index over all axes but the last).
void resize_f32__ref(const ResizeParams& p, const float* x, float* y, int64_t row_begin, int64_t row_end);

// Row micro-kernels of the specialised nearest and linear paths (runtime/resize_run.cc drives them with
// per-axis index/weight tables; PoolKernels chooses them).
//   replicate:  y[j * s + r] = x[j],  j in [0, n), r in [0, s)         (nearest, integer upscale s >= 1)
//   gather:     y[o] = x[idx[o]],  o in [0, n)                         (nearest, any scale)
//   lerp:       y[o] = x[i0[o]] * w0[o] + x[i1[o]] * w1[o]              (linear, horizontal)
//   blend:      y[o] = a[o] * wa + b[o] * wb                            (linear, vertical)
// Replicate and gather copy exactly. lerp and blend round in float (fused or not): within 2^-22 * max|x|
// of the double-precision __ref; a tap with weight 0 still multiplies, so an infinite input there gives
// NaN (as in ONNX Runtime) where resize_f32__ref skips the tap.
using ResizeRepFn = void (*)(const float* x, float* y, int64_t n, int64_t s);
using ResizeGatherFn = void (*)(const float* x, const int32_t* idx, float* y, int64_t n);
using ResizeLerpFn = void (*)(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                              const float* w1, float* y, int64_t n);
using ResizeBlendFn = void (*)(const float* a, const float* b, float wa, float wb, float* y, int64_t n);

void resize_rep_f32__ref(const float* x, float* y, int64_t n, int64_t s);
void resize_gather_f32__ref(const float* x, const int32_t* idx, float* y, int64_t n);
void resize_lerp_f32__ref(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                          const float* w1, float* y, int64_t n);
void resize_blend_f32__ref(const float* a, const float* b, float wa, float wb, float* y, int64_t n);

void resize_rep_f32__avx2(const float* x, float* y, int64_t n, int64_t s);
void resize_gather_f32__avx2(const float* x, const int32_t* idx, float* y, int64_t n);
void resize_lerp_f32__avx2(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                           const float* w1, float* y, int64_t n);
void resize_blend_f32__avx2(const float* a, const float* b, float wa, float wb, float* y, int64_t n);

void resize_rep_f32__neon(const float* x, float* y, int64_t n, int64_t s);
void resize_gather_f32__neon(const float* x, const int32_t* idx, float* y, int64_t n);
void resize_lerp_f32__neon(const float* x, const int32_t* i0, const int32_t* i1, const float* w0,
                           const float* w1, float* y, int64_t n);
void resize_blend_f32__neon(const float* a, const float* b, float wa, float wb, float* y, int64_t n);

}  // namespace flexpipe
