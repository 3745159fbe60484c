// SPDX-License-Identifier: Apache-2.0
// im2col: the column matrix of a convolution for a range of output pixels (input slicing, FlexNN).
//
// For one image and one group, with output pixels numbered p = (od * OH + oh) * OW + ow and reduction
// rows k = ((c * KD + kd) * KH + kh) * KW + kw over the group's channels c < channels (K rows in all):
//     col(k, j) = x[c, od*sd - pd + kd*dd, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]   (0 outside the image)
// for the slice's columns j = p - p0, p in [p0, p1). Then Y[m, p0:p1] = W[m, :] · col (one GEMM per slice)
// computes those output pixels, so a slice of P / slices pixels needs only K * P / slices floats.
//
// Layout: column (k, j) is stored at col[(j / nr) * K * nr + k * nr + j % nr]: the packed-B panels of
// runtime/gemm_driver.h (panel width nr), so the GEMM reads the buffer without a second copy; nr >= p1 - p0
// gives a plain row-major K x nr matrix. Columns past p1 - p0 in the last panel are not written.
// Rows [k_begin, k_end) only, so callers split rows over threads. Exactness: a copy; no arithmetic.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"

namespace flexpipe {

// x points at the group's first channel plane of the image. Variants write exactly what __ref writes
// (AVX2 and NEON move the copied parts of runs with vector loads, never reading outside an input row).
using Im2colFn = void (*)(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                          float* col, int64_t k_begin, int64_t k_end);
void im2col_f32__ref(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                     float* col, int64_t k_begin, int64_t k_end);
#if defined(__x86_64__) || defined(_M_X64)
void im2col_f32__avx2(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end);
#endif
#if defined(__aarch64__)
void im2col_f32__neon(const ConvShape& s, int64_t channels, const float* x, int64_t p0, int64_t p1, int64_t nr,
                      float* col, int64_t k_begin, int64_t k_end);
#endif

}  // namespace flexpipe
