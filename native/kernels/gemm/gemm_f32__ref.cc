// SPDX-License-Identifier: Apache-2.0
// Reference float32 GEMM: blocked i-k-j for row-major B, dot products for transposed B.
#include "kernels/gemm/gemm.h"

#include "common/macros.h"

namespace flexpipe {

namespace {

constexpr int64_t rows_per_block = 4;
constexpr int64_t cols_per_block = 256;

// i-k-j on up to 4 rows of C at once; b rows are contiguous (b_cs == 1).
void gemm_rows_ikj(const GemmArgs& g, int64_t i0, int64_t rows) {
    for (int64_t j0 = 0; j0 < g.n; j0 += cols_per_block) {
        const int64_t nj = g.n - j0 < cols_per_block ? g.n - j0 : cols_per_block;
        float* c[rows_per_block];
        for (int64_t r = 0; r < rows_per_block; ++r) c[r] = g.c + (i0 + (r < rows ? r : 0)) * g.ldc + j0;
        for (int64_t r = 0; r < rows; ++r) {
            if (!g.accumulate) {
                for (int64_t j = 0; j < nj; ++j) c[r][j] = 0.0f;
            }
        }
        for (int64_t p = 0; p < g.k; ++p) {
            const float* __restrict br = g.b + p * g.b_rs + j0;
            if (rows == rows_per_block) {
                const float a0 = g.alpha * g.a[i0 * g.a_rs + p * g.a_cs];
                const float a1 = g.alpha * g.a[(i0 + 1) * g.a_rs + p * g.a_cs];
                const float a2 = g.alpha * g.a[(i0 + 2) * g.a_rs + p * g.a_cs];
                const float a3 = g.alpha * g.a[(i0 + 3) * g.a_rs + p * g.a_cs];
                float* __restrict c0 = c[0];
                float* __restrict c1 = c[1];
                float* __restrict c2 = c[2];
                float* __restrict c3 = c[3];
                for (int64_t j = 0; j < nj; ++j) {
                    const float bv = br[j];
                    c0[j] += a0 * bv;
                    c1[j] += a1 * bv;
                    c2[j] += a2 * bv;
                    c3[j] += a3 * bv;
                }
            } else {
                for (int64_t r = 0; r < rows; ++r) {
                    const float av = g.alpha * g.a[(i0 + r) * g.a_rs + p * g.a_cs];
                    float* cr = c[r];
                    for (int64_t j = 0; j < nj; ++j) cr[j] += av * br[j];
                }
            }
        }
    }
}

// c[i, j] = dot(a row i, b column j) with both contiguous along k (a_cs == 1, b_rs == 1).
void gemm_row_dot(const GemmArgs& g, int64_t i) {
    const float* ar = g.a + i * g.a_rs;
    float* cr = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
        const float* bc = g.b + j * g.b_cs;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t p = 0;
        for (; p + 8 <= g.k; p += 8) {
            for (int q = 0; q < 8; ++q) acc[q] += ar[p + q] * bc[p + q];
        }
        float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; p < g.k; ++p) sum += ar[p] * bc[p];
        cr[j] = (g.accumulate ? cr[j] : 0.0f) + g.alpha * sum;
    }
}

// Any strides: plain i-j-k.
void gemm_row_generic(const GemmArgs& g, int64_t i) {
    float* cr = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
        float sum = 0.0f;
        for (int64_t p = 0; p < g.k; ++p) sum += g.a[i * g.a_rs + p * g.a_cs] * g.b[p * g.b_rs + j * g.b_cs];
        cr[j] = (g.accumulate ? cr[j] : 0.0f) + g.alpha * sum;
    }
}

}  // namespace

void gemm_f32__ref(const GemmArgs& g, int64_t m_begin, int64_t m_end) {
    FLEXPIPE_DCHECK(m_begin <= m_end && g.n >= 0 && g.k >= 0);
    if (g.b_cs == 1 || g.n == 1) {
        for (int64_t i = m_begin; i < m_end; i += rows_per_block) {
            const int64_t rows = m_end - i < rows_per_block ? m_end - i : rows_per_block;
            gemm_rows_ikj(g, i, rows);
        }
    } else if (g.a_cs == 1 && g.b_rs == 1) {
        for (int64_t i = m_begin; i < m_end; ++i) gemm_row_dot(g, i);
    } else {
        for (int64_t i = m_begin; i < m_end; ++i) gemm_row_generic(g, i);
    }
}

}  // namespace flexpipe
