// SPDX-License-Identifier: Apache-2.0
// Plan-time weight transforms of the gemm family (see runtime/prepack.h).
#include <algorithm>

#include "runtime/dispatch.h"
#include "runtime/gemm_driver.h"
#include "runtime/prepack.h"

namespace flexpipe {

namespace {

// gemm_pack_b: a 2-D float32 weight B [K, N] (or [N, K] with trans_b) -> packed B panels of the
// selected ISA, float32 [ceil((n1 - n0) / NR), K, NR] (layout in runtime/gemm_driver.h; dims[2]
// records NR so a consumer can check it matches its kernel table).
// ints: [trans_b, n0 = 0, n1 = N]: the weight columns [n0, n1) to pack (a weight slice, FlexNN). The
// slice is laid out exactly as a whole weight of n1 - n0 columns would be, starting at column n0:
//     out[q, p, t] = B[p, n0 + q * NR + t]   for n0 + q * NR + t < n1, else 0   (B after trans_b)
// so a Gemm/MatMul with ints [..., n0, n1] computes Y's columns [n0, n1) from it.
struct PackBArgs {
    int64_t k = 0, n = 0, n0 = 0, n1 = 0;
    bool trans = false;
};

Status pack_b_args(const TensorView& w, const int64_t* ints, int32_t n_ints, PackBArgs* a) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 2,
                       "failed to prepack gemm_pack_b: weight must be a 2-D float32 tensor (rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG(n_ints >= 1 && n_ints <= 3, "failed to prepack gemm_pack_b: expected 1..3 ints (got %d)", n_ints);
    a->trans = ints[0] != 0;
    a->k = a->trans ? w.dims[1] : w.dims[0];
    a->n = a->trans ? w.dims[0] : w.dims[1];
    a->n0 = n_ints > 1 ? ints[1] : 0;
    a->n1 = n_ints > 2 ? ints[2] : a->n;
    FLEXPIPE_CHECK_ARG(0 <= a->n0 && a->n0 <= a->n1 && a->n1 <= a->n,
                       "failed to prepack gemm_pack_b: column range [%lld, %lld) outside [0, %lld)",
                       static_cast<long long>(a->n0), static_cast<long long>(a->n1), static_cast<long long>(a->n));
    return Status::ok();
}

Status pack_b_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    PackBArgs a;
    FLEXPIPE_RETURN_IF_ERROR(pack_b_args(w, ints, n_ints, &a));
    const int64_t nr = kernels().gemm.nr;
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = (a.n1 - a.n0 + nr - 1) / nr;
    out->dims[1] = a.k;
    out->dims[2] = nr;
    out->numel = out->dims[0] * a.k * nr;
    return Status::ok();
}

Status pack_b_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    PackBArgs a;
    FLEXPIPE_RETURN_IF_ERROR(pack_b_args(w, ints, n_ints, &a));
    const GemmKernels& g = kernels().gemm;
    FLEXPIPE_CHECK_ARG(out.dtype == DType::f32 && out.numel == gemm_packed_b_floats(a.k, a.n1 - a.n0, g.nr),
                       "failed to prepack gemm_pack_b: output has %lld elements", static_cast<long long>(out.numel));
    const int64_t b_rs = a.trans ? 1 : a.n, b_cs = a.trans ? a.k : 1;
    gemm_pack_b(g, w.as<float>(), b_rs, b_cs, a.k, a.n0, a.n1, out.as<float>());
    return Status::ok();
}

// Part `part` of `parts`: the panels [q0, q1) of pack_b_run's result, which are the packing of columns
// [n0 + q0 NR, min(n1, n0 + q1 NR)) written at panel q0 (the layout above is panel-major).
Status pack_b_run_part(const TensorView& w, const int64_t* ints, int32_t n_ints, int64_t part, int64_t parts,
                       const TensorView& out) {
    PackBArgs a;
    FLEXPIPE_RETURN_IF_ERROR(pack_b_args(w, ints, n_ints, &a));
    const GemmKernels& g = kernels().gemm;
    FLEXPIPE_CHECK_ARG(out.dtype == DType::f32 && out.numel == gemm_packed_b_floats(a.k, a.n1 - a.n0, g.nr),
                       "failed to prepack gemm_pack_b: output has %lld elements", static_cast<long long>(out.numel));
    FLEXPIPE_CHECK_ARG(parts >= 1 && part >= 0 && part < parts, "failed to prepack gemm_pack_b: part %lld of %lld",
                       static_cast<long long>(part), static_cast<long long>(parts));
    const int64_t panels = (a.n1 - a.n0 + g.nr - 1) / g.nr;
    const int64_t q0 = panels * part / parts, q1 = panels * (part + 1) / parts;
    if (q0 == q1) return Status::ok();
    const int64_t c0 = a.n0 + q0 * g.nr, c1 = std::min(a.n1, a.n0 + q1 * g.nr);
    const int64_t b_rs = a.trans ? 1 : a.n, b_cs = a.trans ? a.k : 1;
    gemm_pack_b(g, w.as<float>(), b_rs, b_cs, a.k, c0, c1, out.as<float>() + q0 * a.k * g.nr);
    return Status::ok();
}

}  // namespace

void register_gemm_prepacks(std::vector<PrepackEntry>& table) {
    table.push_back(PrepackEntry{"gemm_pack_b", pack_b_shape, pack_b_run, pack_b_run_part});
}

}  // namespace flexpipe
