// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), NEON: four passes of
// 4 output channels.
#include <arm_neon.h>

#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {
namespace {

struct NeonPanelOps {
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

void winograd_f32_f63_filter_panel__neon(const float* a, int64_t C, float* u) {
    filter_panel<NeonPanelOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__neon(const float* a, int64_t C, float* u) {
    filter_panel<NeonPanelOps, 4>(a, C, u);
}

}  // namespace flexpipe
