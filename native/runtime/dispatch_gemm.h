// SPDX-License-Identifier: Apache-2.0
// The gemm part of the kernel table: the packed-panel micro-kernel of this CPU, its tile and the
// cache blocking the driver (runtime/gemm_driver.h) uses with it.
#pragma once

#include <cstdint>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/narrow.h"
#include "runtime/cpu_features.h"

namespace flexpipe {

// Blocking (BLIS loop order, see gemm_driver.cc): a kc x nr micro-panel of packed B is reused by the
// micro-kernel across the mc rows of the packed A block (mc x kc, kept in L2), from L1 or streamed
// from L2; nc bounds the columns swept per packed A block. Values per ISA are in dispatch_gemm.cc
// with their reasons.
struct GemmKernels {
    GemmUkernelFn f32 = nullptr;        // packed micro-kernel, tile mr x nr
    GemmPackAFn f32_pack_a = nullptr;   // A panel packer for mr
    int32_t mr = 0, nr = 0;
    int32_t mc = 0, kc = 0, nc = 0;     // mc multiple of mr, nc multiple of nr
    int32_t tile_panels = 1;            // B panels one micro-kernel call may span (gemm.h: b_next)
    GemmDotFn f32_dot = gemm_f32_dot__ref;  // row dots for a narrow right edge
    // Narrow GEMM (kernels/gemm/narrow.h, runtime/gemm_narrow.h): its micro-kernel, the 16-row panels
    // and the columns one call takes at most; its epilogue (a transposing store).
    GemmNarrowFn f32_narrow = gemm_f32_narrow__ref;
    int32_t narrow_panels = 1, narrow_cols = 4;
    GemmNarrowStoreFn f32_narrow_store = gemm_f32_narrow_store__ref;
};

// Fills t with the variants for isa (ref where a family has no variant for it).
void fill_gemm_kernels(GemmKernels* t, Isa isa);

}  // namespace flexpipe
