// SPDX-License-Identifier: Apache-2.0
// Run-time Winograd filter transform of one 16-channel panel (the lean kernels), AVX2 + FMA: two
// passes of 8 output channels.
#include "kernels/winograd/winograd.h"
#include "kernels/winograd/winograd_impl.h"
#include "kernels/winograd/winograd_ops_avx2.h"

namespace flexpipe {

void winograd_f32_f63_filter_panel__avx2(const float* a, int64_t C, float* u) {
    filter_panel<Avx2Ops, 8>(a, C, u);
}

void winograd_f32_f23_filter_panel__avx2(const float* a, int64_t C, float* u) {
    filter_panel<Avx2Ops, 4>(a, C, u);
}

}  // namespace flexpipe
