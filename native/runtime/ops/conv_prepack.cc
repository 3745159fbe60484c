// SPDX-License-Identifier: Apache-2.0
// Plan-time weight transforms of the conv family (see runtime/prepack.h).
#include "kernels/gemm/narrow.h"
#include "kernels/grouped/grouped.h"
#include "kernels/winograd/winograd.h"
#include "runtime/conv_cost.h"
#include "runtime/prepack.h"

namespace flexpipe {

namespace {

// The output buffer a run was handed: float32 with the elements the shape function computed.
Status check_output(const char* name, const TensorView& out, int64_t want) {
    FLEXPIPE_CHECK_ARG(out.dtype == DType::f32 && out.numel == want,
                       "failed to prepack %s: output has %lld elements (want %lld)", name,
                       static_cast<long long>(out.numel), static_cast<long long>(want));
    return Status::ok();
}

// winograd_f63_filter / winograd_f23_filter: W [M, C, 3, 3] float32 -> U float32 [ceil(M / 16), a², C, 16]
// (a = 8 or 4; layout in kernels/winograd/winograd.h). No ints. The transform is ISA-independent.
Status check_filter(const char* name, const TensorView& w, int32_t n_ints) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 4 && w.dims[2] == 3 && w.dims[3] == 3,
                       "failed to prepack %s: weight must be a float32 [M, C, 3, 3] tensor (rank=%d)", name, w.rank);
    FLEXPIPE_CHECK_ARG(n_ints == 0, "failed to prepack %s: expected no ints (got %d)", name, n_ints);
    return Status::ok();
}

template <ConvAlgo A>
Status filter_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    (void)ints;
    const char* name = A == ConvAlgo::winograd63 ? "winograd_f63_filter" : "winograd_f23_filter";
    FLEXPIPE_RETURN_IF_ERROR(check_filter(name, w, n_ints));
    out->dtype = DType::f32;
    out->rank = 4;
    out->dims[0] = (w.dims[0] + winograd_nr - 1) / winograd_nr;
    out->dims[1] = A == ConvAlgo::winograd63 ? 64 : 16;
    out->dims[2] = w.dims[1];
    out->dims[3] = winograd_nr;
    out->numel = winograd_filter_floats(A, w.dims[0], w.dims[1]);
    return Status::ok();
}

template <ConvAlgo A>
Status filter_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    (void)ints;
    const char* name = A == ConvAlgo::winograd63 ? "winograd_f63_filter" : "winograd_f23_filter";
    FLEXPIPE_RETURN_IF_ERROR(check_filter(name, w, n_ints));
    FLEXPIPE_CHECK_ARG(out.dtype == DType::f32 && out.numel == winograd_filter_floats(A, w.dims[0], w.dims[1]),
                       "failed to prepack %s: output has %lld elements", name, static_cast<long long>(out.numel));
    if (A == ConvAlgo::winograd63) {
        winograd_f32_f63_filter__ref(w.as<float>(), w.dims[0], w.dims[1], out.as<float>());
    } else {
        winograd_f32_f23_filter__ref(w.as<float>(), w.dims[0], w.dims[1], out.as<float>());
    }
    return Status::ok();
}

// conv_narrow_filter: W [M, C, kernel...] float32 (rank 3 to 5, group 1) -> float32 [ceil(M / 16), K, 16],
// K = C * kernel volume: the 16-row panels of kernels/gemm/narrow.h, rows past M zero. No ints. The
// layout is ISA-independent (every ISA's narrow kernel reads 16-row panels).
Status check_narrow(const TensorView& w, int32_t n_ints) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank >= 3 && w.rank <= 5 && w.numel > 0,
                       "failed to prepack conv_narrow_filter: weight must be a non-empty float32 [M, C, kernel...] tensor "
                       "(rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG(n_ints == 0, "failed to prepack conv_narrow_filter: expected no ints (got %d)", n_ints);
    return Status::ok();
}

Status narrow_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    (void)ints;
    FLEXPIPE_RETURN_IF_ERROR(check_narrow(w, n_ints));
    const int64_t k = w.numel / w.dims[0];
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = (w.dims[0] + narrow_panel_rows - 1) / narrow_panel_rows;
    out->dims[1] = k;
    out->dims[2] = narrow_panel_rows;
    out->numel = out->dims[0] * k * narrow_panel_rows;
    return Status::ok();
}

Status narrow_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    TensorView want;
    FLEXPIPE_RETURN_IF_ERROR(narrow_shape(w, ints, n_ints, &want));
    FLEXPIPE_RETURN_IF_ERROR(check_output("conv_narrow_filter", out, want.numel));
    gemm_pack_narrow_a(w.dims[0], want.dims[1], w.as<float>(), want.dims[1], out.as<float>());
    return Status::ok();
}

// grouped_filter: W [M, C / group, kh, kw] float32 -> float32 [group, K, M / group], K = C / group * kh * kw:
// each group's taps with their output channels' weights side by side (kernels/grouped/grouped.h). ints:
// [group] (> 1, dividing M). ISA-independent.
Status grouped_shape_of(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 4 && w.numel > 0,
                       "failed to prepack grouped_filter: weight must be a non-empty float32 [M, C/group, kh, kw] tensor "
                       "(rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG(n_ints == 1 && ints[0] > 1 && w.dims[0] % ints[0] == 0,
                       "failed to prepack grouped_filter: expected ints [group] with group > 1 dividing M = %lld",
                       static_cast<long long>(w.dims[0]));
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = ints[0];
    out->dims[1] = w.numel / w.dims[0];
    out->dims[2] = w.dims[0] / ints[0];
    out->numel = w.numel;
    return Status::ok();
}

Status grouped_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    TensorView want;
    FLEXPIPE_RETURN_IF_ERROR(grouped_shape_of(w, ints, n_ints, &want));
    FLEXPIPE_RETURN_IF_ERROR(check_output("grouped_filter", out, want.numel));
    grouped_pack_filter(w.as<float>(), want.dims[0], want.dims[2], want.dims[1], out.as<float>());
    return Status::ok();
}

}  // namespace

void register_conv_prepacks(std::vector<PrepackEntry>& table) {
    table.push_back({"winograd_f63_filter", filter_shape<ConvAlgo::winograd63>, filter_run<ConvAlgo::winograd63>});
    table.push_back({"winograd_f23_filter", filter_shape<ConvAlgo::winograd23>, filter_run<ConvAlgo::winograd23>});
    table.push_back({"conv_narrow_filter", narrow_shape, narrow_run});
    table.push_back({"grouped_filter", grouped_shape_of, grouped_run});
}

}  // namespace flexpipe
