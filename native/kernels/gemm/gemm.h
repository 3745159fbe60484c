// SPDX-License-Identifier: Apache-2.0
// General matrix multiply kernels (float32) with arbitrary element strides for A and B.
//
// Computes rows [m_begin, m_end) of
//     c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0)
//                      + alpha * sum_k a[i * a_rs + k * a_cs] * b[k * b_rs + j * b_cs]
// for 0 <= j < n. Strides express transposes (A^T: swap a_rs and a_cs), so one kernel serves Gemm
// (transA/transB) and batched MatMul. c rows are dense with leading dimension ldc; row ranges are
// disjoint, so callers split rows over threads.
// Loop order: when B rows are contiguous (b_cs == 1) the kernel runs i-k-j over blocks of 4 rows of C
// and 256 columns, so each B row segment is reused 4 times from L1 and the j loop vectorizes; when
// B is transposed (b_rs == 1) and A rows are contiguous it uses dot products over contiguous k.
// Tolerance: variants must match __ref within k * 2^-20 * sum_k |a * b| (float accumulation).
#pragma once

#include <cstdint>

namespace flexpipe {

struct GemmArgs {
    int64_t n = 0;  // columns of C
    int64_t k = 0;  // reduction length
    float alpha = 1.0f;
    const float* a = nullptr;
    int64_t a_rs = 0, a_cs = 1;
    const float* b = nullptr;
    int64_t b_rs = 0, b_cs = 1;
    float* c = nullptr;
    int64_t ldc = 0;
    bool accumulate = false;
};

using GemmFn = void (*)(const GemmArgs& g, int64_t m_begin, int64_t m_end);
void gemm_f32__ref(const GemmArgs& g, int64_t m_begin, int64_t m_end);

}  // namespace flexpipe
