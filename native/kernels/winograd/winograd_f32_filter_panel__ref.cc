// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), scalar reference:
// float arithmetic, separate multiply and add.
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {
namespace {

struct ScalarPanelOps : ScalarOps {
    static constexpr int lanes = 1;
    static float load(const float* p) { return *p; }
    static void store(float* p, float v) { *p = v; }
};

}  // namespace

void winograd_f32_f63_filter_panel__ref(const float* a, int64_t C, float* u) {
    filter_panel<ScalarPanelOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__ref(const float* a, int64_t C, float* u) {
    filter_panel<ScalarPanelOps, 4>(a, C, u);
}

}  // namespace flexpipe
