// SPDX-License-Identifier: Apache-2.0
// Winograd convolution kernels, AVX2 + FMA (winograd_impl.h over VecAvx2): the F(6,3) and F(2,3) input
// and output transforms (8 lanes = 8 channels of one tile), the run-time filter panel transform (two
// passes of 8 output channels) and the 6 x 16 element-wise GEMM (12 accumulators).
#include <immintrin.h>

#include "kernels/simd/vec_avx2.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {
namespace {

// F(2,3)'s patch rows are 4 pixels, half a vector: channel l and l + 4 share a register (one 128-bit half
// each), then a 4 x 4 transpose inside each half gives d[j] = [ch 0-3 px j | ch 4-7 px j].
struct PixelsF23 : WinogradPixels<VecAvx2> {
    template <int A>
    static void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc, __m256* d) {
        static_assert(A == 4, "F(2,3) rows only");
        if (y < 0 || y >= h) {
            for (int j = 0; j < 4; ++j) d[j] = _mm256_setzero_ps();
            return;
        }
        __m128 q[8];
        if (ix >= 0 && ix + 4 <= w) {
            const float* row = x + y * w + ix;
            for (int l = 0; l < 8; ++l) q[l] = l < nc ? _mm_loadu_ps(row + l * plane) : _mm_setzero_ps();
        } else {
            for (int l = 0; l < 8; ++l) {
                alignas(16) float buf[4];
                for (int j = 0; j < 4; ++j) {
                    const bool in = l < nc && ix + j >= 0 && ix + j < w;
                    buf[j] = in ? x[l * plane + y * w + ix + j] : 0.0f;
                }
                q[l] = _mm_load_ps(buf);
            }
        }
        __m256 r[4];
        for (int l = 0; l < 4; ++l) r[l] = _mm256_insertf128_ps(_mm256_castps128_ps256(q[l]), q[l + 4], 1);
        const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
        const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
        d[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        d[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        d[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        d[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }
};

}  // namespace

void winograd_f32_f63_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    winograd_input<VecAvx2, WinogradF63>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f63_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output<VecAvx2, WinogradF63>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

void winograd_f32_f23_input__avx2(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix,
                                  int nc, float* v, int64_t v_stride) {
    winograd_input<VecAvx2, WinogradF23, PixelsF23>(x, plane, h, w, iy, ix, nc, v, v_stride);
}

void winograd_f32_f23_output__avx2(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane,
                                   int64_t w, int rows, int cols, int nc, const ConvActivation& act) {
    winograd_output<VecAvx2, WinogradF23>(m, m_stride, bias, y, plane, w, rows, cols, nc, act);
}

void winograd_f32_f63_filter_panel__avx2(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecAvx2, WinogradF63>(a, C, u);
}

void winograd_f32_f23_filter_panel__avx2(const float* a, int64_t C, float* u) {
    winograd_filter_panel<VecAvx2, WinogradF23>(a, C, u);
}

void winograd_f32_6x16__avx2(int64_t k, const float* a, int64_t a_stride, const float* b, float* d, int64_t d_stride,
                             int rows) {
    winograd_gemm_vec<VecAvx2>(k, a, a_stride, b, d, d_stride, rows);
}

}  // namespace flexpipe
