// SPDX-License-Identifier: Apache-2.0
// Winograd convolution kernels, NEON (winograd_impl.h over VecNeon): the F(6,3) and F(2,3) input and
// output transforms (two passes of 4 lanes = 4 channels of one tile), the run-time filter panel transform
// (four passes of 4 output channels) and the 6 x 16 element-wise GEMM (24 accumulators, 30 of the 32
// vector registers live).
#include "kernels/simd/vec_neon.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {

void winograd_f32_f63_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    winograd_input<VecNeon, WinogradF63>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f63_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output<VecNeon, WinogradF63>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

void winograd_f32_f23_input__neon(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    winograd_input<VecNeon, WinogradF23>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f23_output__neon(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output<VecNeon, WinogradF23>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

void winograd_f32_f63_filter_panel__neon(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecNeon, WinogradF63>(a, C, u);
}

void winograd_f32_f23_filter_panel__neon(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecNeon, WinogradF23>(a, C, u);
}

void winograd_f32_6x16__neon(int64_t k, const float* a, int64_t a_stride, const float* b, float* d, int64_t d_stride,
                             int rows) {
    winograd_gemm_vec<VecNeon>(k, a, a_stride, b, d, d_stride, rows);
}

}  // namespace flexpipe
