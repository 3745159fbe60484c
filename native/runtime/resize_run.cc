// SPDX-License-Identifier: Apache-2.0
// The specialised float32 Resize paths (see resize_run.h): per-axis tables, then row kernels.
#include "runtime/resize_run.h"

#include <algorithm>
#include <cstring>

#include "runtime/parallel.h"

namespace flexpipe {

namespace {

constexpr size_t ws_align = 64;

// Taps of one axis: i0/w0 always, i1/w1 only for linear (null for nearest).
struct AxisTable {
    int32_t* i0 = nullptr;
    int32_t* i1 = nullptr;
    float* w0 = nullptr;
    float* w1 = nullptr;
};

struct View {
    int64_t planes = 1, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
    int64_t rows() const { return planes * out_h; }
};

size_t table_bytes(ResizeMode mode, int64_t out_h, int64_t out_w) {
    const size_t n = static_cast<size_t>(out_h + out_w);
    return mode == ResizeMode::nearest ? 4 * n : 16 * n;
}

// Whether axis a (a < 0: the virtual H axis of a rank-1 tensor) maps every output index to at most
// max_taps in-roi taps, a single tap having weight 1.
bool axis_fits(const ResizeParams& p, int a, int max_taps) {
    for (int64_t o = 0; a >= 0 && o < p.axis[a].out; ++o) {
        int64_t idx[4];
        double w[4];
        const int nt = resize_axis_taps(p, a, o, idx, w);
        if (nt < 1 || nt > max_taps || (nt == 1 && w[0] != 1.0)) return false;
    }
    return true;
}

// Fills the table of axis a (a < 0: one identity entry); axis_fits(p, a, t.i1 ? 2 : 1) must hold.
void fill_axis(const ResizeParams& p, int a, const AxisTable& t) {
    const int64_t out = a < 0 ? 1 : p.axis[a].out;
    for (int64_t o = 0; o < out; ++o) {
        int64_t idx[4] = {0, 0, 0, 0};
        double w[4] = {1.0, 0.0, 0.0, 0.0};
        const int nt = a < 0 ? 1 : resize_axis_taps(p, a, o, idx, w);
        t.i0[o] = static_cast<int32_t>(idx[0]);
        if (t.i1) {
            t.i1[o] = static_cast<int32_t>(nt == 2 ? idx[1] : idx[0]);
            t.w0[o] = static_cast<float>(w[0]);
            t.w1[o] = nt == 2 ? static_cast<float>(w[1]) : 0.0f;
        }
    }
}

// Offset in X of the source plane of output plane `plane` (leading axes mapped through their taps).
int64_t source_plane(const ResizeParams& p, const View& v, int64_t plane) {
    int64_t src = 0, in_stride = v.in_h * v.in_w;
    for (int a = p.rank - 3; a >= 0; --a) {
        int64_t idx[4];
        double w[4];
        resize_axis_taps(p, a, plane % p.axis[a].out, idx, w);
        plane /= p.axis[a].out;
        src += idx[0] * in_stride;
        in_stride *= p.axis[a].in;
    }
    return src;
}

// W replication factor s when idx[o] = o / s for every o and out_w = in_w * s, else 0.
int64_t integer_upscale(const View& v, const int32_t* idx) {
    if (v.out_w % v.in_w != 0) return 0;
    const int64_t s = v.out_w / v.in_w;
    for (int64_t o = 0; o < v.out_w; ++o)
        if (idx[o] != o / s) return 0;
    return s;
}

void nearest_rows(const PoolKernels& k, const ResizeParams& p, const View& v, const AxisTable& th,
                  const AxisTable& tw, int64_t rep, const float* x, float* y, int64_t r0, int64_t r1) {
    int64_t plane = r0 / v.out_h, oh = r0 % v.out_h;
    int64_t plane_src = source_plane(p, v, plane), prev = -1;
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t src = plane_src + th.i0[oh] * v.in_w;
        float* yr = y + r * v.out_w;
        if (src == prev)
            std::memcpy(yr, yr - v.out_w, static_cast<size_t>(v.out_w) * sizeof(float));
        else if (rep > 0)
            k.resize_rep(x + src, yr, v.in_w, rep);
        else
            k.resize_gather(x + src, tw.i0, yr, v.out_w);
        prev = src;
        if (++oh == v.out_h && r + 1 < r1) oh = 0, plane_src = source_plane(p, v, ++plane);
    }
}

void linear_rows(const PoolKernels& k, const ResizeParams& p, const View& v, const AxisTable& th,
                 const AxisTable& tw, const float* x, float* y, float* rows, int64_t r0, int64_t r1) {
    float* buf[2] = {rows, rows + v.out_w};
    int64_t tag[2] = {-1, -1};  // source row offset each buffer holds, interpolated along W
    // Index of a buffer holding source row src, interpolating it into the buffer other than `keep`.
    auto fetch = [&](int64_t src, int keep) {
        if (tag[0] == src) return 0;
        if (tag[1] == src) return 1;
        const int b = keep == 0 ? 1 : 0;
        k.resize_lerp(x + src, tw.i0, tw.i1, tw.w0, tw.w1, buf[b], v.out_w);
        tag[b] = src;
        return b;
    };
    int64_t plane = r0 / v.out_h, oh = r0 % v.out_h;
    int64_t plane_src = source_plane(p, v, plane);
    int last = 1;  // buffer of the newest source row: kept, as the next output row likely reads it
    for (int64_t r = r0; r < r1; ++r) {
        float* yr = y + r * v.out_w;
        const int a = fetch(plane_src + th.i0[oh] * v.in_w, last);
        if (th.w1[oh] == 0.0f) {
            std::memcpy(yr, buf[a], static_cast<size_t>(v.out_w) * sizeof(float));
            last = a;
        } else {
            const int b = fetch(plane_src + th.i1[oh] * v.in_w, a);
            k.resize_blend(buf[a], buf[b], th.w0[oh], th.w1[oh], yr, v.out_w);
            last = b;
        }
        if (++oh == v.out_h && r + 1 < r1) oh = 0, plane_src = source_plane(p, v, ++plane);
    }
}

}  // namespace

size_t resize_fast_workspace_bytes(ResizeMode mode, int64_t out_h, int64_t out_w, int threads) {
    if (mode == ResizeMode::cubic) return 0;
    const size_t rows = mode == ResizeMode::linear ? 8 * static_cast<size_t>(out_w) * threads : 0;
    return ws_align + table_bytes(mode, out_h, out_w) + rows;
}

bool resize_fast_f32(const PoolKernels& k, const ResizeParams& p, const float* x, float* y, void* workspace,
                     size_t workspace_bytes, int threads) {
    if (p.mode == ResizeMode::cubic || p.rank < 1 || workspace == nullptr) return false;
    const bool linear = p.mode == ResizeMode::linear;
    View v;
    v.in_w = p.axis[p.rank - 1].in, v.out_w = p.axis[p.rank - 1].out;
    if (p.rank >= 2) v.in_h = p.axis[p.rank - 2].in, v.out_h = p.axis[p.rank - 2].out;
    for (int a = 0; a + 2 < p.rank; ++a) v.planes *= p.axis[a].out;
    if (v.in_w >= (int64_t{1} << 31) || v.in_h >= (int64_t{1} << 31) || v.in_w == 0 || v.rows() == 0 ||
        v.out_w == 0)
        return false;
    // Tables at the first 64-byte boundary of the workspace.
    const uintptr_t base = reinterpret_cast<uintptr_t>(workspace);
    const size_t skip = (ws_align - base % ws_align) % ws_align;
    const size_t tables = table_bytes(p.mode, v.out_h, v.out_w);
    if (workspace_bytes < skip + tables) return false;
    const size_t row_bytes = 8 * static_cast<size_t>(v.out_w);  // two rows of floats per thread
    const int64_t fit =
        linear ? static_cast<int64_t>((workspace_bytes - skip - tables) / row_bytes) : threads;
    if (fit < 1) return false;
    // Checked before anything is written: a fallback leaves the workspace untouched.
    for (int a = 0; a + 2 < p.rank; ++a)
        if (!axis_fits(p, a, 1)) return false;
    if (!axis_fits(p, p.rank - 1, linear ? 2 : 1) || !axis_fits(p, p.rank - 2, linear ? 2 : 1)) return false;
    char* ws = static_cast<char*>(workspace) + skip;
    AxisTable tw, th;
    const int64_t n = v.out_w + v.out_h;
    tw.i0 = reinterpret_cast<int32_t*>(ws), th.i0 = tw.i0 + v.out_w;
    if (linear) {
        tw.i1 = tw.i0 + n, th.i1 = tw.i1 + v.out_w;
        tw.w0 = reinterpret_cast<float*>(ws + 8 * n), th.w0 = tw.w0 + v.out_w;
        tw.w1 = tw.w0 + n, th.w1 = tw.w1 + v.out_w;
    }
    fill_axis(p, p.rank - 1, tw);
    fill_axis(p, p.rank - 2, th);
    if (!linear) {
        const int64_t rep = integer_upscale(v, tw.i0);
        parallel_for(v.rows(), threads,
                     [&](int64_t b, int64_t e) { nearest_rows(k, p, v, th, tw, rep, x, y, b, e); });
        return true;
    }
    const int64_t chunks = std::min<int64_t>({fit, threads, v.rows()});
    float* rows = reinterpret_cast<float*>(ws + tables);
    parallel_for(chunks, threads, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
            linear_rows(k, p, v, th, tw, x, y, rows + c * 2 * v.out_w, v.rows() * c / chunks,
                        v.rows() * (c + 1) / chunks);
        }
    });
    return true;
}

}  // namespace flexpipe
