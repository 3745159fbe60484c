// SPDX-License-Identifier: Apache-2.0
// Pooling kernels over NC[D]HW planes: max (float32, uint8, int8), average, Lp, and global variants.
//
// Layout: x is [planes, in[0], in[1], in[2]] and y is [planes, out[0], out[1], out[2]] where a plane is
// one (n, c) pair; 1-D and 2-D pools are passed as 3-D with leading unit dims (kernel 1, stride 1,
// dilation 1, pads 0). Window of output o along an axis: taps i = o * stride - pad + t * dilation for
// t in [0, kernel); taps outside [0, in) are skipped (padding never wins a max and adds nothing to a
// sum).
// Average divisor: the number of taps inside [0, in) (count_include_pad = 0), or inside
// [-pad, in + pad_end) (count_include_pad = 1, ONNX Runtime's rule, so ceil_mode overhang beyond the
// end padding is never counted).
// Max indices (optional): the flat index of the max in x (plane offset included), row-major
// (storage_order 0) or with the spatial part column-major (storage_order 1); first max wins on ties.
// Callers split plane ranges over threads.
#pragma once

#include <cstdint>

#include "common/dtype.h"
#include "common/window.h"

namespace flexpipe {

// The window (common/window.h), its end padding (counted by count_include_pad) and the planes.
struct PoolShape : Window3 {
    int64_t planes = 1;
    int64_t pad_end[3] = {0, 0, 0};
};

// Max pooling of float32, float64, uint8 or int8 planes (maxpool_dtype_supported); indices may be null.
bool maxpool_dtype_supported(DType t);
void maxpool__ref(DType t, const PoolShape& s, const void* x, void* y, int64_t* indices, int storage_order,
                  int64_t plane_begin, int64_t plane_end);

void avgpool_f32__ref(const PoolShape& s, const float* x, float* y, bool count_include_pad,
                      int64_t plane_begin, int64_t plane_end);

// y = (sum over in-range taps |x|^p)^(1/p).
void lppool_f32__ref(const PoolShape& s, const float* x, float* y, double p, int64_t plane_begin,
                     int64_t plane_end);

// One value per plane of `size` elements: mean, max, or Lp norm.
void global_avgpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end);
void global_maxpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end);
void global_lppool_f32__ref(const float* x, float* y, int64_t size, double p, int64_t plane_begin,
                            int64_t plane_end);

// Row micro-kernels of the fast float32 path (runtime/pool_run.cc drives them; PoolKernels chooses them).
// A max or sum over a kd x kh x kw window is separable: reduce the valid kd x kh input rows of one
// output row into a row buffer (vertical pass, contiguous), then reduce kw taps with the stride
// (horizontal pass). The driver computes border columns (windows that reach into the padding) itself
// and hands the kernels only the interior, so no kernel checks bounds.
//   vertical:    y[i] = max(a[i], b[i])  or  a[i] + b[i],  i in [0, n); y may be a (accumulate in place)
//   horizontal:  y[o] = max_t b[o * stride + t * dilation]  or  scale * sum_t b[...],
//                t in [0, k), o in [0, n) (reads b[0 .. (n - 1) * stride + (k - 1) * dilation], nothing
//                beyond)
//   whole plane: sum (returned as double) or max of x[0, n), n >= 1
// Exactness: max kernels equal __ref bit for bit on non-NaN data (order-free); the vertical and
// horizontal sums add in the same order as __ref (float); plane sums use other orders (tests bound
// |got - ref| <= n * 2^-24 * sum|x|). NaN propagation of the SIMD max kernels is unspecified. Variants
// may compute an output twice (an overlapping last vector): y must not overlap the inputs, except y == a.
using PoolRowFn = void (*)(float* y, const float* a, const float* b, int64_t n);
using PoolHMaxFn = void (*)(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation);
using PoolHSumFn = void (*)(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                            float scale);
// Fused 3x3 stride-2 max (the stem pools of ResNet and SqueezeNet): for o in [0, n),
//   y[o] = max over columns c = 2o, 2o + 1, 2o + 2 of v(c),  v(c) = max(r0[c], r1[c], r2[c])
// with the rows and then the columns reduced in that order, as vmax then hmax would (reads r*[0 .. 2n]).
// One pass instead of two over a row buffer: a plane of 27 columns costs one call per output row.
using PoolMax3x3S2Fn = void (*)(const float* r0, const float* r1, const float* r2, float* y, int64_t n);
using PoolSumFn = double (*)(const float* x, int64_t n);
using PoolMaxFn = float (*)(const float* x, int64_t n);

void pool_vmax_f32__ref(float* y, const float* a, const float* b, int64_t n);
void pool_vsum_f32__ref(float* y, const float* a, const float* b, int64_t n);
void pool_hmax_f32__ref(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation);
void pool_hsum_f32__ref(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                        float scale);
double pool_sum_f32__ref(const float* x, int64_t n);
float pool_max_f32__ref(const float* x, int64_t n);
void pool_max3x3s2_f32__ref(const float* r0, const float* r1, const float* r2, float* y, int64_t n);

void pool_vmax_f32__avx2(float* y, const float* a, const float* b, int64_t n);
void pool_vsum_f32__avx2(float* y, const float* a, const float* b, int64_t n);
void pool_hmax_f32__avx2(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation);
void pool_hsum_f32__avx2(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale);
double pool_sum_f32__avx2(const float* x, int64_t n);
float pool_max_f32__avx2(const float* x, int64_t n);
void pool_max3x3s2_f32__avx2(const float* r0, const float* r1, const float* r2, float* y, int64_t n);
void pool_max3x3s2_f32__avx512(const float* r0, const float* r1, const float* r2, float* y, int64_t n);

void pool_vmax_f32__neon(float* y, const float* a, const float* b, int64_t n);
void pool_vsum_f32__neon(float* y, const float* a, const float* b, int64_t n);
void pool_hmax_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation);
void pool_hsum_f32__neon(const float* b, float* y, int64_t n, int64_t k, int64_t stride, int64_t dilation,
                         float scale);
double pool_sum_f32__neon(const float* x, int64_t n);
float pool_max_f32__neon(const float* x, int64_t n);
void pool_max3x3s2_f32__neon(const float* r0, const float* r1, const float* r2, float* y, int64_t n);

}  // namespace flexpipe
