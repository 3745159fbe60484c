// SPDX-License-Identifier: Apache-2.0
// The vector ops of winograd_impl.h's transforms over NEON (4 lanes), shared by the NEON files
// (include only from *__neon.cc: internal linkage).
#pragma once

#include <arm_neon.h>

namespace flexpipe {
namespace {

struct NeonOps {
    using V = float32x4_t;
    static constexpr int lanes = 4;
    static V add(V a, V b) { return vaddq_f32(a, b); }
    static V sub(V a, V b) { return vsubq_f32(a, b); }
    static V mul(V a, float s) { return vmulq_n_f32(a, s); }
    static V madd(V a, float s, V c) { return vfmaq_n_f32(c, a, s); }
    static V load(const float* p) { return vld1q_f32(p); }
    static void store(float* p, V v) { vst1q_f32(p, v); }
};

}  // namespace
}  // namespace flexpipe
