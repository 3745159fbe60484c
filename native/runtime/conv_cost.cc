// SPDX-License-Identifier: Apache-2.0
// Geometry and cost of the convolution algorithms (see conv_cost.h; mirrored by lib/model/ops/conv-cost.ts).
#include "runtime/conv_cost.h"

#include "runtime/gemm_driver.h"
#include "runtime/conv_narrow.h"
#include "runtime/conv_taps.h"

namespace flexpipe {

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

const char* conv_algo_name(ConvAlgo a) {
    switch (a) {
        case ConvAlgo::direct: return "direct";
        case ConvAlgo::im2col: return "im2col";
        case ConvAlgo::gemm1x1: return "gemm1x1";
        case ConvAlgo::winograd63: return "winograd63";
        case ConvAlgo::winograd23: return "winograd23";
        case ConvAlgo::depthwise: return "depthwise";
        case ConvAlgo::narrow: return "narrow";
        case ConvAlgo::winograd63_lean: return "winograd63_lean";
        case ConvAlgo::winograd23_lean: return "winograd23_lean";
        case ConvAlgo::grouped: return "grouped";
        case ConvAlgo::taps: return "taps";
    }
    return "unknown";
}

static bool is_2d_3x3_unit(const ConvShape& s) {
    return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1 && s.kernel[1] == 3 && s.kernel[2] == 3 &&
           s.dilation[1] == 1 && s.dilation[2] == 1;
}

bool conv_algo_applies(ConvAlgo a, const ConvShape& s) {
    switch (a) {
        case ConvAlgo::direct:
        case ConvAlgo::im2col:
            return true;
        case ConvAlgo::gemm1x1:
            for (int i = 0; i < 3; ++i)
                if (s.kernel[i] != 1 || s.stride[i] != 1 || s.pad[i] != 0 || s.in[i] != s.out[i]) return false;
            return true;
        case ConvAlgo::winograd63:
        case ConvAlgo::winograd23:
        case ConvAlgo::winograd63_lean:
        case ConvAlgo::winograd23_lean:
            return is_2d_3x3_unit(s) && s.groups == 1 && s.stride[1] == 1 && s.stride[2] == 1;
        case ConvAlgo::narrow:
            return s.groups == 1;
        case ConvAlgo::depthwise:  // any kh x kw (depthwise_kxk unless 3x3 undilated), equal dilations
            return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1 && s.dilation[1] == s.dilation[2] &&
                   s.groups == s.in_channels && s.groups == s.out_channels && s.stride[1] == s.stride[2] &&
                   (s.stride[1] == 1 || s.stride[1] == 2);
        case ConvAlgo::grouped:  // kernels/grouped/grouped.h: 2-D, group > 1, equal strides (1 or 2) and dilations
            return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1 && s.groups > 1 && s.dilation[1] == s.dilation[2] &&
                   s.stride[1] == s.stride[2] && (s.stride[1] == 1 || s.stride[1] == 2);
        case ConvAlgo::taps:  // runtime/conv_taps.h: 2-D, group 1
            return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1 && s.groups == 1;
    }
    return false;
}

WinogradGeometry winograd_geometry(ConvAlgo a, const ConvShape& s, int64_t slices) {
    WinogradGeometry g;
    g.alpha = is_winograd63(a) ? 8 : 4;
    g.m = g.alpha - 2;
    const int64_t a2 = int64_t{g.alpha} * g.alpha;
    g.tiles_h = ceil_div(s.out[1], g.m);
    g.tiles_w = ceil_div(s.out[2], g.m);
    g.tiles = s.batch * g.tiles_h * g.tiles_w;
    const int64_t cap = 2304 / a2;
    const int64_t per = ceil_div(g.tiles, slices < 1 ? 1 : slices);
    g.block = per < cap ? per : cap;
    if (g.block < 1) g.block = 1;
    g.cv = round_up(s.in_channels, 8);
    g.panels = ceil_div(s.out_channels, 16);
    g.v_floats = g.block * a2 * g.cv;
    g.mw_floats = g.block * a2 * 16;
    return g;
}

int64_t winograd_filter_floats(ConvAlgo a, int64_t M, int64_t C) {
    const int64_t a2 = is_winograd63(a) ? 64 : 16;
    return a2 * ceil_div(M, 16) * C * 16;
}

GroupedShape grouped_shape(const ConvShape& s) {
    GroupedShape g;
    g.groups = s.groups;
    g.cg = s.in_channels / s.groups, g.mg = s.out_channels / s.groups;
    g.h = s.in[1], g.w = s.in[2], g.oh = s.out[1], g.ow = s.out[2];
    g.kh = s.kernel[1], g.kw = s.kernel[2];
    g.stride = s.stride[1], g.dilation = s.dilation[1];
    g.pad_top = s.pad[1], g.pad_left = s.pad[2];
    return g;
}

Im2colGeometry im2col_geometry(const ConvShape& s, int64_t slices) {
    Im2colGeometry g;
    g.k = s.in_channels / s.groups * s.kernel[0] * s.kernel[1] * s.kernel[2];
    g.pixels = s.out[0] * s.out[1] * s.out[2];
    g.slice_pixels = ceil_div(g.pixels, slices < 1 ? 1 : slices);
    return g;
}

// The GEMM problem of one slice as runtime/conv_gemm.cc poses it (only the sizes and how the operands
// are read matter to the workspace): weights read in place (packed when their rows alias, see
// gemm_driver.cc); B the packed columns (im2col) or the input read in place (1x1), whose row stride
// decides whether panels are copied.
static GemmProblem slice_problem(const ConvShape& s, const Im2colGeometry& g, bool packed_b) {
    static const float dummy = 0.0f;
    GemmProblem p;
    p.k = g.k;
    p.m1 = s.out_channels / s.groups;
    p.n1 = g.slice_pixels;
    p.a_in_place = true, p.a_rs = g.k;  // the weights' rows [M, K]
    if (packed_b) p.b_packed.data = &dummy;
    else p.b_in_place = true, p.b_rs = g.pixels;  // the input's rows: whole planes
    return p;
}

ConvCost conv_cost(ConvAlgo a, const ConvShape& s, int64_t slices, int threads, const GemmKernels& gk) {
    ConvCost c;
    const int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2];
    const int64_t pixels = s.out[0] * s.out[1] * s.out[2];
    const int64_t K = s.in_channels / s.groups * kvol;
    c.flops = 2 * s.batch * s.out_channels * K * pixels;
    c.weight_bytes = 4 * s.out_channels * K;
    const int64_t p = threads < 1 ? 1 : threads;
    switch (a) {
        case ConvAlgo::direct:
        case ConvAlgo::depthwise:
            break;
        case ConvAlgo::grouped:
            c.workspace_bytes = 64 + p * round_up(4 * grouped_geometry(grouped_shape(s)).scratch_floats, 64);
            break;
        case ConvAlgo::taps:
            c.workspace_bytes = conv_taps_workspace_bytes(gk, s, static_cast<int>(p));
            c.flops = 2 * s.batch * s.out_channels * s.in_channels * conv_taps_geometry(s).tap_pixels;
            break;
        case ConvAlgo::im2col: {
            const Im2colGeometry g = im2col_geometry(s, slices);
            c.workspace_bytes = 64 + 4 * K * round_up(g.slice_pixels, gk.nr) +
                                static_cast<int64_t>(gemm_workspace_bytes(gk, slice_problem(s, g, true), p));
            break;
        }
        case ConvAlgo::gemm1x1: {
            const Im2colGeometry g = im2col_geometry(s, slices);
            c.workspace_bytes = static_cast<int64_t>(gemm_workspace_bytes(gk, slice_problem(s, g, false), p));
            break;
        }
        case ConvAlgo::narrow:
            c.workspace_bytes = conv_narrow_workspace_bytes(s, slices, p);
            c.weight_bytes = 4 * round_up(s.out_channels, 16) * K;
            break;
        case ConvAlgo::winograd63:
        case ConvAlgo::winograd23:
        case ConvAlgo::winograd63_lean:
        case ConvAlgo::winograd23_lean: {
            const WinogradGeometry g = winograd_geometry(a, s, slices);
            const int64_t a2 = int64_t{g.alpha} * g.alpha;
            c.workspace_bytes = 64 + 4 * (round_up(g.v_floats, 16) + p * g.mw_floats);
            // Nonzeros of Bᵀ (44 or 8) and Aᵀ (38 or 6); a 2-D transform is a + a (input) or a + m
            // (output) 1-D transforms, each 2 * nnz flops.
            const bool f63 = is_winograd63(a);
            const int64_t bt = f63 ? 44 : 8, at = f63 ? 38 : 6;
            const int64_t in_t = 2 * g.alpha * 2 * bt, out_t = (g.alpha + g.m) * 2 * at;
            c.flops = g.tiles * (2 * a2 * s.in_channels * s.out_channels + in_t * s.in_channels +
                                 out_t * s.out_channels);
            c.weight_bytes = 4 * winograd_filter_floats(a, s.out_channels, s.in_channels);
            if (is_winograd_lean(a)) {
                c.workspace_bytes += 4 * p * a2 * s.in_channels * 16;
                const int64_t f1d = f63 ? 19 : 6, blocks = ceil_div(g.tiles, g.block);
                c.flops += blocks * (3 + g.alpha) * f1d * round_up(s.out_channels, 16) * s.in_channels;
                c.weight_bytes = 4 * round_up(s.out_channels, 16) * s.in_channels * 9;
            }
            break;
        }
    }
    return c;
}

int conv_threads_for_workspace(ConvAlgo a, const ConvShape& s, int64_t slices, int64_t bytes, int want,
                               const GemmKernels& g) {
    for (int t = want < 1 ? 1 : want; t >= 1; --t)
        if (conv_cost(a, s, slices, t, g).workspace_bytes <= bytes) return t;
    return 0;
}

}  // namespace flexpipe
