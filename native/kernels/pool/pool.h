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

namespace flexpipe {

struct PoolShape {
    int64_t planes = 1;
    int64_t in[3] = {1, 1, 1};
    int64_t out[3] = {1, 1, 1};
    int64_t kernel[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1};
    int64_t dilation[3] = {1, 1, 1};
    int64_t pad[3] = {0, 0, 0};
    int64_t pad_end[3] = {0, 0, 0};
};

// indices may be null.
void maxpool_f32__ref(const PoolShape& s, const float* x, float* y, int64_t* indices, int storage_order,
                      int64_t plane_begin, int64_t plane_end);
void maxpool_f64__ref(const PoolShape& s, const double* x, double* y, int64_t* indices, int storage_order,
                      int64_t plane_begin, int64_t plane_end);
void maxpool_u8__ref(const PoolShape& s, const uint8_t* x, uint8_t* y, int64_t* indices, int storage_order,
                     int64_t plane_begin, int64_t plane_end);
void maxpool_i8__ref(const PoolShape& s, const int8_t* x, int8_t* y, int64_t* indices, int storage_order,
                     int64_t plane_begin, int64_t plane_end);

void avgpool_f32__ref(const PoolShape& s, const float* x, float* y, bool count_include_pad,
                      int64_t plane_begin,
                      int64_t plane_end);

// y = (sum over in-range taps |x|^p)^(1/p).
void lppool_f32__ref(const PoolShape& s, const float* x, float* y, double p, int64_t plane_begin,
                     int64_t plane_end);

// One value per plane of `size` elements: mean, max, or Lp norm.
void global_avgpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end);
void global_maxpool_f32__ref(const float* x, float* y, int64_t size, int64_t plane_begin, int64_t plane_end);
void global_lppool_f32__ref(const float* x, float* y, int64_t size, double p, int64_t plane_begin,
                            int64_t plane_end);

}  // namespace flexpipe
