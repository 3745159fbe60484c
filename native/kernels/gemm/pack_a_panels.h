// SPDX-License-Identifier: Apache-2.0
// The entry shape the SIMD A-panel packers share (layout in gemm.h): a packer with a fast path for
// full panels of MR rows contiguous along k hands everything else to `other`.
#pragma once

#include <cstdint>

#include "common/macros.h"
#include "kernels/gemm/gemm.h"

namespace flexpipe {

// With mr == MR and a_cs == 1, packs every full MR-row panel with panel(kc, a_rows, a_rs, alpha, dst)
// and a last partial panel with `other`; any other mr or column stride goes wholly to `other`.
template <int64_t MR, typename Panel>
inline void pack_a_full_panels(int64_t mr, int64_t rows, int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                               float alpha, float* dst, Panel panel, GemmPackAFn other) {
    FLEXPIPE_DCHECK(mr >= 1 && rows >= 0 && kc >= 0);
    if (mr != MR || a_cs != 1) {
        other(mr, rows, kc, a, a_rs, a_cs, alpha, dst);
        return;
    }
    int64_t r0 = 0;
    for (; r0 + MR <= rows; r0 += MR) panel(kc, a + r0 * a_rs, a_rs, alpha, dst + r0 * kc);
    if (r0 < rows) other(mr, rows - r0, kc, a + r0 * a_rs, a_rs, a_cs, alpha, dst + r0 * kc);
}

}  // namespace flexpipe
