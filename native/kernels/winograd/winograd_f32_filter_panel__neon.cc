// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), NEON: four passes of
// 4 output channels.
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_neon.h"

namespace flexpipe {

void winograd_f32_f63_filter_panel__neon(const float* a, int64_t C, float* u) {
    filter_panel<NeonOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__neon(const float* a, int64_t C, float* u) {
    filter_panel<NeonOps, 4>(a, C, u);
}

}  // namespace flexpipe
