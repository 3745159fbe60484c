// SPDX-License-Identifier: Apache-2.0
// Reference Winograd kernels, float32 (scalar): the offline filter transforms in double, the input and
// output transforms one channel at a time and the run-time filter panel transform (winograd_impl.h's
// tile drivers over VecRef), and the element-wise GEMM block.
#include "common/macros.h"
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {

void winograd_f32_f63_filter__ref(const float* w, int64_t M, int64_t C, float* u) {
    winograd_filter_ref<WinogradF63>(w, M, C, u);
}

void winograd_f32_f23_filter__ref(const float* w, int64_t M, int64_t C, float* u) {
    winograd_filter_ref<WinogradF23>(w, M, C, u);
}

void winograd_f32_f63_input__ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride) {
    winograd_input_ref<WinogradF63>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f63_output__ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output_ref<WinogradF63>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

void winograd_f32_f23_input__ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                 int nc, float* v, int64_t v_stride) {
    winograd_input_ref<WinogradF23>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f23_output__ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                  int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output_ref<WinogradF23>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

// Float arithmetic, separate multiply and add (VecRef).
void winograd_f32_f63_filter_panel__ref(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecRef, WinogradF63>(a, C, u);
}

void winograd_f32_f23_filter_panel__ref(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecRef, WinogradF23>(a, C, u);
}

// d[i][j] = sum_c a[i * a_stride + c] * b[c * 16 + j], accumulated in c order.
void winograd_f32_6x16__ref(int64_t k, const float* a, int64_t a_stride, const float* b, float* d,
                            int64_t d_stride, int rows) {
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    for (int i = 0; i < rows; ++i) {
        float acc[winograd_nr] = {0.0f};
        const float* ai = a + i * a_stride;
        for (int64_t c = 0; c < k; ++c) {
            const float av = ai[c];
            for (int j = 0; j < winograd_nr; ++j) acc[j] += av * b[c * winograd_nr + j];
        }
        for (int j = 0; j < winograd_nr; ++j) d[i * d_stride + j] = acc[j];
    }
}

}  // namespace flexpipe
