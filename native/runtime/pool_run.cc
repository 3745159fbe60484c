// SPDX-License-Identifier: Apache-2.0
// The fast float32 pooling path (see pool_run.h): vertical pass into a row buffer, horizontal pass over it.
#include "runtime/pool_run.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace flexpipe {

namespace {

// Taps t in [0, k) whose index start + t * dilation lies in [lo, hi) are exactly t in [*t0, *t1).
void taps_in(int64_t start, int64_t k, int64_t dilation, int64_t lo, int64_t hi, int64_t* t0, int64_t* t1) {
    if (start >= lo && start + (k - 1) * dilation < hi) {
        *t0 = 0, *t1 = k;
        return;
    }
    const int64_t b = start < hi ? std::min(k, (hi - start + dilation - 1) / dilation) : 0;
    const int64_t a = start < lo ? (lo - start + dilation - 1) / dilation : 0;
    *t0 = std::min(a, b), *t1 = b;
}

struct RowGeometry {
    int64_t in_w, out_w, kw, sw, dw, pw, pw_end, extent;
    int64_t chunk;     // output columns per row-buffer fill
    int64_t ci0, ci1;  // interior columns: their whole window lies in [0, in_w)
};

RowGeometry row_geometry(const PoolShape& s) {
    RowGeometry g;
    g.in_w = s.in[2], g.out_w = s.out[2];
    g.kw = s.kernel[2], g.sw = s.stride[2], g.dw = s.dilation[2], g.pw = s.pad[2], g.pw_end = s.pad_end[2];
    g.extent = (g.kw - 1) * g.dw + 1;
    g.chunk = (pool_row_buffer - g.extent) / g.sw + 1;
    g.ci0 = std::min(g.out_w, (g.pw + g.sw - 1) / g.sw);
    const int64_t last = g.in_w + g.pw - g.extent;  // o * sw <= last keeps the window's end inside
    g.ci1 = std::max(g.ci0, std::min(g.out_w, last >= 0 ? last / g.sw + 1 : 0));
    return g;
}

// Output column o at the border: reduce its in-range taps in buf (which starts at input column c0).
float border_column(const RowGeometry& g, PoolKind kind, const float* buf, int64_t c0, int64_t vcount,
                    int64_t o) {
    const int64_t start = o * g.sw - g.pw;
    int64_t t0, t1;
    taps_in(start, g.kw, g.dw, 0, g.in_w, &t0, &t1);
    const int64_t base = start - c0;  // buf index of tap 0 (in-range taps land inside the buffer)
    if (kind == PoolKind::max) {
        if (t0 == t1) return std::numeric_limits<float>::lowest();
        float m = buf[base + t0 * g.dw];
        for (int64_t t = t0 + 1; t < t1; ++t) m = buf[base + t * g.dw] > m ? buf[base + t * g.dw] : m;
        return m;
    }
    int64_t hcount = t1 - t0;
    if (kind == PoolKind::avg_include_pad) {
        int64_t p0, p1;
        taps_in(start, g.kw, g.dw, -g.pw, g.in_w + g.pw_end, &p0, &p1);
        hcount = p1 - p0;
    }
    float sum = 0.0f;
    for (int64_t t = t0; t < t1; ++t) sum += buf[base + t * g.dw];
    const int64_t count = vcount * hcount;
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
}

// The input rows of one output row's windows: depth taps [d0, d1) from sd, height taps [h0, h1) from sh.
struct RowWindow {
    int64_t sd, sh, d0, d1, h0, h1;
};

// Vertical pass: buf[0, c1 - c0) = op over the window's input rows of columns [c0, c1) of plane xp. The
// first row is read in place and copied only when it is the only one.
void vertical_pass(const PoolShape& s, PoolRowFn op, const float* xp, const RowWindow& w, int64_t c0,
                   int64_t c1, float* buf) {
    const int64_t in_w = s.in[2];
    const float* first = nullptr;
    for (int64_t t = w.d0; t < w.d1; ++t) {
        const float* xd = xp + (w.sd + t * s.dilation[0]) * s.in[1] * in_w + c0;
        for (int64_t u = w.h0; u < w.h1; ++u) {
            const float* xr = xd + (w.sh + u * s.dilation[1]) * in_w;
            if (first == nullptr)
                first = xr;
            else
                op(buf, first, xr, c1 - c0), first = buf;
        }
    }
    if (first != buf) std::memcpy(buf, first, static_cast<size_t>(c1 - c0) * sizeof(float));
}

// A 2-D 3x3 stride-2 max pool (dilation 1) whose output row has all three input rows: the fused
// kernel reduces rows and columns in one pass; border columns are reduced here in the same order.
bool fused_max3x3s2(const PoolShape& s, const RowWindow& w) {
    return s.kernel[0] == 1 && s.kernel[1] == 3 && s.kernel[2] == 3 && s.stride[2] == 2 && s.dilation[1] == 1 &&
           s.dilation[2] == 1 && w.d1 - w.d0 == 1 && w.h1 - w.h0 == 3;
}

void max3x3s2_row(const PoolKernels& k, const RowGeometry& g, const float* r0, const float* r1, const float* r2,
                  float* yr) {
    if (g.ci1 > g.ci0) {
        const int64_t c = g.ci0 * 2 - g.pw;
        k.max3x3s2(r0 + c, r1 + c, r2 + c, yr + g.ci0, g.ci1 - g.ci0);
    }
    auto border = [&](int64_t o) {
        int64_t t0, t1;
        const int64_t start = o * 2 - g.pw;
        taps_in(start, 3, 1, 0, g.in_w, &t0, &t1);
        float m = std::numeric_limits<float>::lowest();
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t c = start + t;
            float v = r1[c] > r0[c] ? r1[c] : r0[c];
            v = r2[c] > v ? r2[c] : v;
            m = t == t0 || v > m ? v : m;
        }
        yr[o] = m;
    };
    for (int64_t o = 0; o < g.ci0; ++o) border(o);
    for (int64_t o = g.ci1; o < g.out_w; ++o) border(o);
}

}  // namespace

bool pool_rows_apply(const PoolShape& s) {
    return (s.kernel[2] - 1) * s.dilation[2] + 1 <= pool_row_buffer / 2;
}

int64_t pool_rows(const PoolShape& s) {
    return s.planes * s.out[0] * s.out[1];
}

void pool_rows_f32(const PoolKernels& k, const PoolShape& s, PoolKind kind, const float* x, float* y,
                   int64_t row_begin, int64_t row_end) {
    if (row_begin >= row_end) return;
    const RowGeometry g = row_geometry(s);
    const bool is_max = kind == PoolKind::max;
    const PoolRowFn vertical = is_max ? k.vmax : k.vsum;
    const int64_t in_plane = s.in[0] * s.in[1] * g.in_w;
    float buf[pool_row_buffer];
    int64_t oh = row_begin % s.out[1], od = row_begin / s.out[1] % s.out[0];
    int64_t plane = row_begin / (s.out[1] * s.out[0]);
    for (int64_t r = row_begin; r < row_end; ++r) {
        float* yr = y + r * g.out_w;
        const int64_t sd = od * s.stride[0] - s.pad[0], sh = oh * s.stride[1] - s.pad[1];
        RowWindow w{sd, sh, 0, 0, 0, 0};
        taps_in(sd, s.kernel[0], s.dilation[0], 0, s.in[0], &w.d0, &w.d1);
        taps_in(sh, s.kernel[1], s.dilation[1], 0, s.in[1], &w.h0, &w.h1);
        int64_t vcount = (w.d1 - w.d0) * (w.h1 - w.h0);  // input rows in the window
        if (vcount == 0) {
            std::fill(yr, yr + g.out_w, is_max ? std::numeric_limits<float>::lowest() : 0.0f);
        } else if (is_max && k.max3x3s2 != nullptr && fused_max3x3s2(s, w)) {
            const float* xr = x + plane * in_plane + (w.sd + w.d0 * s.dilation[0]) * s.in[1] * g.in_w +
                              (w.sh + w.h0) * g.in_w;
            max3x3s2_row(k, g, xr, xr + g.in_w, xr + 2 * g.in_w, yr);
        } else {
            if (kind == PoolKind::avg_include_pad) {  // the divisor counts padded rows too
                int64_t a0, a1, b0, b1;
                taps_in(sd, s.kernel[0], s.dilation[0], -s.pad[0], s.in[0] + s.pad_end[0], &a0, &a1);
                taps_in(sh, s.kernel[1], s.dilation[1], -s.pad[1], s.in[1] + s.pad_end[1], &b0, &b1);
                vcount = (a1 - a0) * (b1 - b0);
            }
            const float* xp = x + plane * in_plane;
            for (int64_t ow0 = 0; ow0 < g.out_w; ow0 += g.chunk) {
                const int64_t ow1 = std::min(g.out_w, ow0 + g.chunk);
                // Input columns [c0, c1) of this chunk's windows that lie inside the input.
                const int64_t c0 = std::max<int64_t>(0, ow0 * g.sw - g.pw);
                const int64_t c1 = std::min(g.in_w, (ow1 - 1) * g.sw - g.pw + g.extent);
                if (c1 > c0) vertical_pass(s, vertical, xp, w, c0, c1, buf);
                // Interior columns of this chunk go to the horizontal kernel, border columns are done here.
                const int64_t i0 = std::min(std::max(g.ci0, ow0), ow1);
                const int64_t i1 = std::min(std::max(g.ci1, i0), ow1);
                if (i1 > i0) {
                    const float* b = buf + (i0 * g.sw - g.pw - c0);
                    if (is_max)
                        k.hmax(b, yr + i0, i1 - i0, g.kw, g.sw, g.dw);
                    else
                        k.hsum(b, yr + i0, i1 - i0, g.kw, g.sw, g.dw,
                               1.0f / static_cast<float>(vcount * g.kw));
                }
                for (int64_t o = ow0; o < i0; ++o) yr[o] = border_column(g, kind, buf, c0, vcount, o);
                for (int64_t o = i1; o < ow1; ++o) yr[o] = border_column(g, kind, buf, c0, vcount, o);
            }
        }
        if (++oh == s.out[1]) {
            oh = 0;
            if (++od == s.out[0]) od = 0, ++plane;
        }
    }
}

void global_pool_f32(const PoolKernels& k, bool avg, const float* x, float* y, int64_t size,
                     int64_t plane_begin, int64_t plane_end) {
    for (int64_t pl = plane_begin; pl < plane_end; ++pl) {
        const float* xp = x + pl * size;
        if (size == 0)
            y[pl] = 0.0f;
        else if (avg)
            y[pl] = static_cast<float>(k.sum(xp, size) / static_cast<double>(size));
        else
            y[pl] = k.max(xp, size);
    }
}

}  // namespace flexpipe
