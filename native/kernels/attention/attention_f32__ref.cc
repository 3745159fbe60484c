// SPDX-License-Identifier: Apache-2.0
// Reference float32 attention for one head, one query row at a time (layout: attention.h).
#include <cmath>

#include "common/macros.h"
#include "kernels/attention/attention.h"

namespace flexpipe {

void attention_f32__ref(const AttentionArgs& a, int64_t row_begin, int64_t row_end, float* ws) {
    FLEXPIPE_DCHECK(row_begin >= 0 && row_end <= a.seq_q && a.dh >= 1);
    float* s = ws;  // the score row of query i, then its probabilities
    for (int64_t i = row_begin; i < row_end; ++i) {
        const int64_t nk = a.causal && i + 1 < a.seq_kv ? i + 1 : a.seq_kv;
        const float* qi = a.q + i * a.ldq;
        // s_j = (q_i . k_j) * scale + mask_ij
        float m = -INFINITY;
        for (int64_t j = 0; j < nk; ++j) {
            const float* kj = a.k + j * a.ldk;
            float dot = 0.0f;
            for (int64_t d = 0; d < a.dh; ++d) dot += qi[d] * kj[d];
            s[j] = dot * a.scale + (a.mask ? a.mask[i * a.mask_ld + j] : 0.0f);
            m = s[j] > m ? s[j] : m;
        }
        // p_j = exp(s_j - max) / sum
        double sum = 0.0;
        for (int64_t j = 0; j < nk; ++j) {
            s[j] = std::exp(s[j] - m);
            sum += s[j];
        }
        const float inv = static_cast<float>(1.0 / sum);
        // o_i = sum_j p_j v_j
        float* oi = a.o + i * a.ldo;
        for (int64_t d = 0; d < a.dh; ++d) oi[d] = 0.0f;
        for (int64_t j = 0; j < nk; ++j) {
            const float p = s[j] * inv;
            const float* vj = a.v + j * a.ldv;
            for (int64_t d = 0; d < a.dh; ++d) oi[d] += p * vj[d];
        }
    }
}

}  // namespace flexpipe
