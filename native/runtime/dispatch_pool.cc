// SPDX-License-Identifier: Apache-2.0
// Chooses the pool and Resize row micro-kernels for an ISA.
#include "runtime/dispatch_pool.h"

namespace flexpipe {

PoolKernels pool_kernels_for(Isa isa) {
    PoolKernels t{Isa::ref,
                  pool_vmax_f32__ref,
                  pool_vsum_f32__ref,
                  pool_hmax_f32__ref,
                  pool_hsum_f32__ref,
                  pool_sum_f32__ref,
                  pool_max_f32__ref,
                  resize_rep_f32__ref,
                  resize_gather_f32__ref,
                  resize_lerp_f32__ref,
                  resize_blend_f32__ref};
    t.max3x3s2 = pool_max3x3s2_f32__ref;
#if defined(__x86_64__) || defined(_M_X64)
    if (base_isa(isa) == Isa::avx2) {
        t = PoolKernels{Isa::avx2,
                        pool_vmax_f32__avx2,
                        pool_vsum_f32__avx2,
                        pool_hmax_f32__avx2,
                        pool_hsum_f32__avx2,
                        pool_sum_f32__avx2,
                        pool_max_f32__avx2,
                        resize_rep_f32__avx2,
                        resize_gather_f32__avx2,
                        resize_lerp_f32__avx2,
                        resize_blend_f32__avx2};
        t.max3x3s2 = pool_max3x3s2_f32__avx2;
    }
    if (isa == Isa::avx512) t.max3x3s2 = pool_max3x3s2_f32__avx512;  // the rest as avx2
#elif defined(__aarch64__)
    if (isa == Isa::neon) {
        t = PoolKernels{Isa::neon,
                        pool_vmax_f32__neon,
                        pool_vsum_f32__neon,
                        pool_hmax_f32__neon,
                        pool_hsum_f32__neon,
                        pool_sum_f32__neon,
                        pool_max_f32__neon,
                        resize_rep_f32__neon,
                        resize_gather_f32__neon,
                        resize_lerp_f32__neon,
                        resize_blend_f32__neon};
        t.max3x3s2 = pool_max3x3s2_f32__neon;
    }
#endif
    (void)isa;
    return t;
}

const PoolKernels& pool_kernels() {
    static const PoolKernels table = pool_kernels_for(selected_isa());
    return table;
}

}  // namespace flexpipe
