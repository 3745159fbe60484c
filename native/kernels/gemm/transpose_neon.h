// SPDX-License-Identifier: Apache-2.0
// The 4x4 float transpose in NEON registers that the Winograd transforms and the narrow GEMM's
// epilogue share (include only from *__neon.cc files).
#pragma once

#include <arm_neon.h>

namespace flexpipe {

// In place: r[i] lane j becomes r[j] lane i, for i, j < 4.
inline void transpose_4x4_neon(float32x4_t* r) {
    const float32x4x2_t a = vtrnq_f32(r[0], r[1]), b = vtrnq_f32(r[2], r[3]);
    r[0] = vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0]));
    r[1] = vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1]));
    r[2] = vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0]));
    r[3] = vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1]));
}

}  // namespace flexpipe
