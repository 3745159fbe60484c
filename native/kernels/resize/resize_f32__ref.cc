// SPDX-License-Identifier: Apache-2.0
// Reference float32 Resize: per-axis taps, combined as a weighted sum over their product.
#include <cmath>

#include "common/macros.h"
#include "kernels/resize/resize.h"

namespace flexpipe {

// Source coordinate of output coordinate x; sets *outside for tf_crop_and_resize out of range.
static double source_coord(const ResizeParams& p, const ResizeAxis& ax, double x, bool* outside) {
    const double len = ax.length_resized, in = static_cast<double>(ax.in);
    switch (p.coord) {
        case ResizeCoord::asymmetric: return x / ax.scale;
        case ResizeCoord::pytorch_half_pixel: return len > 1.0 ? (x + 0.5) / ax.scale - 0.5 : 0.0;
        case ResizeCoord::tf_half_pixel_for_nn: return (x + 0.5) / ax.scale;
        case ResizeCoord::align_corners: return len == 1.0 ? 0.0 : x * (in - 1.0) / (len - 1.0);
        case ResizeCoord::half_pixel_symmetric: {
            const double adj = static_cast<double>(ax.out) / (ax.scale * in);
            const double offset = in / 2.0 * (1.0 - adj);
            return offset + (x + 0.5) / ax.scale - 0.5;
        }
        case ResizeCoord::tf_crop_and_resize: {
            const double span = (ax.roi_end - ax.roi_start) * (in - 1.0);
            const double xo = (len == 1.0 ? span / 2.0 : x * span / (len - 1.0)) + ax.roi_start * (in - 1.0);
            *outside = xo < 0.0 || xo > in - 1.0;
            return xo;
        }
        case ResizeCoord::half_pixel:
        default: return (x + 0.5) / ax.scale - 0.5;
    }
}

static double cubic_weight(double t, double a) {  // Keys' kernel at distance |t|
    t = std::fabs(t);
    if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

int resize_axis_taps(const ResizeParams& p, int a, int64_t o, int64_t* idx, double* w) {
    const ResizeAxis& ax = p.axis[a];
    bool outside = false;
    const double xo = source_coord(p, ax, static_cast<double>(o), &outside);
    if (outside) return -1;
    const double base = std::floor(xo), t = xo - base;
    const int64_t b = static_cast<int64_t>(base);
    int n = 0;
    if (p.mode == ResizeMode::nearest) {
        bool up = false;  // take floor + 1 instead of floor
        if (t != 0.0) {
            switch (p.nearest) {
                case ResizeNearest::round_prefer_ceil: up = t >= 0.5; break;
                case ResizeNearest::floor: up = false; break;
                case ResizeNearest::ceil: up = true; break;
                case ResizeNearest::simple: up = ax.scale < 1.0; break;
                case ResizeNearest::round_prefer_floor:
                default: up = t > 0.5; break;
            }
        }
        idx[0] = b + (up ? 1 : 0);
        w[0] = 1.0;
        n = 1;
    } else if (p.mode == ResizeMode::linear) {
        idx[0] = b, w[0] = 1.0 - t;
        idx[1] = b + 1, w[1] = t;
        n = 2;
    } else {
        for (int k = 0; k < 4; ++k) {
            idx[k] = b - 1 + k;
            w[k] = cubic_weight(t - static_cast<double>(k - 1), p.cubic_a);
        }
        n = 4;
    }
    if (p.exclude_outside && n > 1) {
        double sum = 0.0;
        for (int k = 0; k < n; ++k) {
            if (idx[k] < 0 || idx[k] >= ax.in) w[k] = 0.0;
            sum += w[k];
        }
        for (int k = 0; k < n; ++k) w[k] = sum != 0.0 ? w[k] / sum : 0.0;
    }
    int kept = 0;
    for (int k = 0; k < n; ++k) {
        if (w[k] == 0.0 && n > 1) continue;
        idx[kept] = idx[k] < 0 ? 0 : (idx[k] >= ax.in ? ax.in - 1 : idx[k]);
        w[kept] = w[k];
        ++kept;
    }
    if (kept == 0) {  // every weight was zero: keep one zero-weight tap so the sum is 0
        idx[0] = 0, w[0] = 0.0;
        kept = 1;
    }
    return kept;
}

void resize_f32__ref(const ResizeParams& p, const float* x, float* y, int64_t row_begin, int64_t row_end) {
    FLEXPIPE_DCHECK(p.rank >= 1 && p.rank <= resize_max_rank);
    const int last = p.rank - 1;
    int64_t in_strides[resize_max_rank];
    int64_t s = 1;
    for (int a = last; a >= 0; --a) in_strides[a] = s, s *= p.axis[a].in;
    const int64_t out_w = p.axis[last].out;
    int64_t combo_off[resize_max_combos];
    double combo_w[resize_max_combos];
    for (int64_t row = row_begin; row < row_end; ++row) {
        float* yr = y + row * out_w;
        int n_combo = 1;
        combo_off[0] = 0, combo_w[0] = 1.0;
        bool outside = false;
        int64_t rem = row;
        for (int a = last - 1; a >= 0 && !outside; --a) {  // expand the combos axis by axis
            const int64_t o = rem % p.axis[a].out;
            rem /= p.axis[a].out;
            int64_t idx[4];
            double w[4];
            const int nt = resize_axis_taps(p, a, o, idx, w);
            if (nt < 0) {
                outside = true;
                break;
            }
            FLEXPIPE_DCHECK(n_combo * nt <= resize_max_combos);
            for (int c = n_combo - 1; c >= 0; --c) {
                for (int k = nt - 1; k >= 0; --k) {
                    combo_off[c * nt + k] = combo_off[c] + idx[k] * in_strides[a];
                    combo_w[c * nt + k] = combo_w[c] * w[k];
                }
            }
            n_combo *= nt;
        }
        for (int64_t ow = 0; ow < out_w; ++ow) {
            int64_t idx[4];
            double w[4];
            const int nt = outside ? -1 : resize_axis_taps(p, last, ow, idx, w);
            if (nt < 0) {
                yr[ow] = p.extrapolation_value;
                continue;
            }
            double acc = 0.0;
            for (int c = 0; c < n_combo; ++c) {
                const float* xc = x + combo_off[c];
                double v = 0.0;
                for (int k = 0; k < nt; ++k) v += w[k] * xc[idx[k]];
                acc += combo_w[c] * v;
            }
            yr[ow] = static_cast<float>(acc);
        }
    }
}

}  // namespace flexpipe
