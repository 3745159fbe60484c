// SPDX-License-Identifier: Apache-2.0
// Plan-time weight transforms of the conv family (see runtime/prepack.h).
#include <algorithm>
#include <vector>

#include "kernels/gemm/narrow.h"
#include "kernels/grouped/grouped.h"
#include "kernels/winograd/winograd.h"
#include "runtime/conv_cost.h"
#include "runtime/conv_taps.h"
#include "runtime/prepack.h"

namespace flexpipe {

namespace {

// A window of kernel taps [ky0, ky1) x [kx0, kx1) of a 2-D filter W [M, C, KH, KW]: the taps some output
// reads inside the input, the others trimmed at plan time (lib/model/ops/conv-taps.ts: DeepLabV3's
// ASPP convolutions at dilation 24 and 36 on a 14x14 map are 1x1 ones). ints [ky0, ky1, kx0, kx1] at
// `at`, or none: the whole kernel.
struct TapWindow {
    bool whole = true;
    int64_t ky0 = 0, ky1 = 0, kx0 = 0, kx1 = 0;
    int64_t taps() const { return (ky1 - ky0) * (kx1 - kx0); }
};

Status read_window(const char* name, const TensorView& w, const int64_t* ints, int32_t n_ints, int32_t at,
                   TapWindow* win) {
    if (n_ints == at) return Status::ok();
    FLEXPIPE_CHECK_ARG(n_ints == at + 4 && w.rank == 4, "failed to prepack %s: a tap window is 4 ints [ky0, ky1, kx0, kx1] "
                       "of a 2-D filter (got %d ints, rank %d)", name, n_ints - at, w.rank);
    win->whole = false;
    win->ky0 = ints[at], win->ky1 = ints[at + 1], win->kx0 = ints[at + 2], win->kx1 = ints[at + 3];
    FLEXPIPE_CHECK_ARG(0 <= win->ky0 && win->ky0 < win->ky1 && win->ky1 <= w.dims[2] && 0 <= win->kx0 &&
                           win->kx0 < win->kx1 && win->kx1 <= w.dims[3],
                       "failed to prepack %s: tap window [%lld, %lld) x [%lld, %lld) outside the %lld x %lld kernel", name,
                       static_cast<long long>(win->ky0), static_cast<long long>(win->ky1), static_cast<long long>(win->kx0),
                       static_cast<long long>(win->kx1), static_cast<long long>(w.dims[2]),
                       static_cast<long long>(w.dims[3]));
    return Status::ok();
}

// Floats per output channel of the filter cut to `win`.
int64_t window_k(const TensorView& w, const TapWindow& win) {
    return win.whole ? w.numel / w.dims[0] : w.dims[1] * win.taps();
}

// W cut to the window into `cut` (M x window_k floats), or W's own data when whole.
const float* cut_window(const TensorView& w, const TapWindow& win, std::vector<float>& cut) {
    if (win.whole) return w.as<float>();
    const int64_t M = w.dims[0], C = w.dims[1], KH = w.dims[2], KW = w.dims[3];
    cut.resize(static_cast<size_t>(M * C * win.taps()));
    const float* src = w.as<float>();
    float* dst = cut.data();
    for (int64_t mc = 0; mc < M * C; ++mc)
        for (int64_t ky = win.ky0; ky < win.ky1; ++ky)
            for (int64_t kx = win.kx0; kx < win.kx1; ++kx) *dst++ = src[(mc * KH + ky) * KW + kx];
    return cut.data();
}

// The output buffer a run was handed: float32 with the elements the shape function computed.
Status check_output(const char* name, const TensorView& out, int64_t want) {
    FLEXPIPE_CHECK_ARG(out.dtype == DType::f32 && out.numel == want,
                       "failed to prepack %s: output has %lld elements (want %lld)", name,
                       static_cast<long long>(out.numel), static_cast<long long>(want));
    return Status::ok();
}

using ShapeOf = Status (*)(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out);

using PackFn = void (*)(const float* filter, const TensorView& w, const TensorView& want, float* out);

// A windowed transform's run: the shape function's output (checked again, as the run may be called
// alone), the buffer checked against it, the filter cut to the window of the ints from `at` (W's own
// data when there is none), then `pack` from the cut filter into the buffer.
Status windowed_run(const char* name, ShapeOf shape_of, int32_t at, PackFn pack, const TensorView& w, const int64_t* ints,
                    int32_t n_ints, const TensorView& out) {
    TensorView want;
    FLEXPIPE_RETURN_IF_ERROR(shape_of(w, ints, n_ints, &want));
    FLEXPIPE_RETURN_IF_ERROR(check_output(name, out, want.numel));
    TapWindow win;
    FLEXPIPE_RETURN_IF_ERROR(read_window(name, w, ints, n_ints, at, &win));
    std::vector<float> cut;
    pack(cut_window(w, win, cut), w, want, out.as<float>());
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
// K = C * kernel volume: the 16-row panels of kernels/gemm/narrow.h, rows past M zero. ints: none, or a
// tap window [ky0, ky1, kx0, kx1] of a 2-D filter (then K = C * its taps). The layout is ISA-independent
// (every ISA's narrow kernel reads 16-row panels).
Status check_narrow(const TensorView& w, const int64_t* ints, int32_t n_ints, TapWindow* win) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank >= 3 && w.rank <= 5 && w.numel > 0,
                       "failed to prepack conv_narrow_filter: weight must be a non-empty float32 [M, C, kernel...] tensor "
                       "(rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG(n_ints == 0 || n_ints == 4,
                       "failed to prepack conv_narrow_filter: expected no ints or a tap window (got %d)", n_ints);
    return read_window("conv_narrow_filter", w, ints, n_ints, 0, win);
}

Status narrow_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    TapWindow win;
    FLEXPIPE_RETURN_IF_ERROR(check_narrow(w, ints, n_ints, &win));
    const int64_t k = window_k(w, win);
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = (w.dims[0] + narrow_panel_rows - 1) / narrow_panel_rows;
    out->dims[1] = k;
    out->dims[2] = narrow_panel_rows;
    out->numel = out->dims[0] * k * narrow_panel_rows;
    return Status::ok();
}

Status narrow_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    return windowed_run("conv_narrow_filter", narrow_shape, 0, [](const float* f, const TensorView& w, const TensorView& want, float* o) {
        gemm_pack_narrow_a(w.dims[0], want.dims[1], f, want.dims[1], o);
    }, w, ints, n_ints, out);
}

// grouped_filter: W [M, C / group, kh, kw] float32 -> float32 [group, K, M / group], K = C / group * kh * kw:
// each group's taps with their output channels' weights side by side (kernels/grouped/grouped.h). ints:
// [group] (> 1, dividing M), then optionally a tap window [ky0, ky1, kx0, kx1] (K = C / group * its taps).
// ISA-independent.
Status check_grouped(const TensorView& w, const int64_t* ints, int32_t n_ints, TapWindow* win) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 4 && w.numel > 0,
                       "failed to prepack grouped_filter: weight must be a non-empty float32 [M, C/group, kh, kw] tensor "
                       "(rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG((n_ints == 1 || n_ints == 5) && ints[0] > 1 && w.dims[0] % ints[0] == 0,
                       "failed to prepack grouped_filter: expected ints [group] with group > 1 dividing M = %lld",
                       static_cast<long long>(w.dims[0]));
    return read_window("grouped_filter", w, ints, n_ints, 1, win);
}

Status grouped_shape_of(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    TapWindow win;
    FLEXPIPE_RETURN_IF_ERROR(check_grouped(w, ints, n_ints, &win));
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = ints[0];
    out->dims[1] = window_k(w, win);
    out->dims[2] = w.dims[0] / ints[0];
    out->numel = w.dims[0] * out->dims[1];
    return Status::ok();
}

Status grouped_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    return windowed_run("grouped_filter", grouped_shape_of, 1, [](const float* f, const TensorView&, const TensorView& want, float* o) {
        grouped_pack_filter(f, want.dims[0], want.dims[2], want.dims[1], o);
    }, w, ints, n_ints, out);
}

// conv_window: W [M, C, KH, KW] float32 -> float32 [M, C, ky1 - ky0, kx1 - kx0], the taps of the window
// [ky0, ky1) x [kx0, kx1) (ints), for the kernels that read a raw filter (im2col, gemm1x1, direct).
Status window_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 4 && w.numel > 0,
                       "failed to prepack conv_window: weight must be a non-empty float32 [M, C, KH, KW] tensor (rank=%d)",
                       w.rank);
    TapWindow win;
    FLEXPIPE_CHECK_ARG(n_ints == 4, "failed to prepack conv_window: expected ints [ky0, ky1, kx0, kx1] (got %d)", n_ints);
    FLEXPIPE_RETURN_IF_ERROR(read_window("conv_window", w, ints, n_ints, 0, &win));
    *out = w;
    out->data = nullptr;
    out->dims[2] = win.ky1 - win.ky0;
    out->dims[3] = win.kx1 - win.kx0;
    out->numel = w.dims[0] * w.dims[1] * win.taps();
    return Status::ok();
}

Status window_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    return windowed_run("conv_window", window_shape, 0, [](const float* f, const TensorView&, const TensorView& want, float* o) {
        std::copy(f, f + want.numel, o);
    }, w, ints, n_ints, out);
}

// conv_taps_filter: W [M, C, KH, KW] float32 -> float32 [KH * KW, M, C], each tap's M x C matrix
// (runtime/conv_taps.h); ints: none, or a tap window [ky0, ky1, kx0, kx1] (then its taps only).
Status taps_shape(const TensorView& w, const int64_t* ints, int32_t n_ints, TensorView* out) {
    FLEXPIPE_CHECK_ARG(w.dtype == DType::f32 && w.rank == 4 && w.numel > 0,
                       "failed to prepack conv_taps_filter: weight must be a non-empty float32 [M, C, KH, KW] tensor "
                       "(rank=%d)", w.rank);
    FLEXPIPE_CHECK_ARG(n_ints == 0 || n_ints == 4,
                       "failed to prepack conv_taps_filter: expected no ints or a tap window (got %d)", n_ints);
    TapWindow win;
    FLEXPIPE_RETURN_IF_ERROR(read_window("conv_taps_filter", w, ints, n_ints, 0, &win));
    out->dtype = DType::f32;
    out->rank = 3;
    out->dims[0] = win.whole ? w.dims[2] * w.dims[3] : win.taps();
    out->dims[1] = w.dims[0];
    out->dims[2] = w.dims[1];
    out->numel = out->dims[0] * w.dims[0] * w.dims[1];
    return Status::ok();
}

Status taps_run(const TensorView& w, const int64_t* ints, int32_t n_ints, const TensorView& out) {
    return windowed_run("conv_taps_filter", taps_shape, 0, [](const float* f, const TensorView&, const TensorView& want, float* o) {
        conv_taps_pack_filter(f, want.dims[1], want.dims[2], want.dims[0], o);
    }, w, ints, n_ints, out);
}

}  // namespace

void register_conv_prepacks(std::vector<PrepackEntry>& table) {
    table.push_back({"winograd_f63_filter", filter_shape<ConvAlgo::winograd63>, filter_run<ConvAlgo::winograd63>});
    table.push_back({"winograd_f23_filter", filter_shape<ConvAlgo::winograd23>, filter_run<ConvAlgo::winograd23>});
    table.push_back({"conv_narrow_filter", narrow_shape, narrow_run});
    table.push_back({"grouped_filter", grouped_shape_of, grouped_run});
    table.push_back({"conv_window", window_shape, window_run});
    table.push_back({"conv_taps_filter", taps_shape, taps_run});
}

}  // namespace flexpipe
