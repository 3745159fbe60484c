// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), scalar reference:
// float arithmetic, separate multiply and add.
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"

namespace flexpipe {

void winograd_f32_f63_filter_panel__ref(const float* a, int64_t C, float* u) {
    filter_panel<ScalarOps, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__ref(const float* a, int64_t C, float* u) {
    filter_panel<ScalarOps, 4>(a, C, u);
}

}  // namespace flexpipe
