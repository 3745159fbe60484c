// SPDX-License-Identifier: Apache-2.0
// AVX-512F epilogue of the narrow GEMM (contract in narrow.h): 16 columns of the Cᵀ tile (16 rows
// each) are one 16x16 block; unpacklo/hi of floats, then of float pairs, then two rounds of 128-bit
// lane shuffles turn it into 16 rows of C, each written as one (masked) vector.
#include <immintrin.h>

#include "common/macros.h"
#include "kernels/copy/transpose16_avx512.h"
#include "kernels/gemm/narrow.h"

// GCC 12's _mm512 shuffles, unpacks, max and min pass _mm512_undefined_ps() (a self-initialised variable)
// as their unused merge source, which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace flexpipe {

void gemm_f32_narrow_store__avx512(int64_t rows, int64_t cols, const float* t, const float* bias, const float* add,
                                   float* c, int64_t c_rs, bool clamp, float lo, float hi) {
    FLEXPIPE_DCHECK(rows >= 0 && rows <= narrow_ldt && cols >= 0);
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        const int64_t nr = rows - r0 < 16 ? rows - r0 : 16;
        for (int64_t j0 = 0; j0 < cols; j0 += 16) {
            const int64_t nc = cols - j0 < 16 ? cols - j0 : 16;
            const __mmask16 m = static_cast<__mmask16>((1u << nc) - 1u);
            __m512 v[16];
            for (int j = 0; j < 16; ++j)
                v[j] = j < nc ? _mm512_loadu_ps(t + (j0 + j) * narrow_ldt + r0) : _mm512_setzero_ps();
            transpose16(v);
            for (int64_t i = 0; i < nr; ++i) {
                const int64_t r = r0 + i;
                __m512 x = v[i];
                if (bias) x = _mm512_add_ps(x, _mm512_set1_ps(bias[r]));
                if (add) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, add + r * c_rs + j0));
                // vmaxps/vminps return their second operand on NaN: x second lets a NaN pass.
                if (clamp) x = _mm512_min_ps(vhi, _mm512_max_ps(vlo, x));
                _mm512_mask_storeu_ps(c + r * c_rs + j0, m, x);
            }
        }
    }
}

}  // namespace flexpipe
