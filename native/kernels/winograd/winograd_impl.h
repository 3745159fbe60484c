// SPDX-License-Identifier: Apache-2.0
// The Winograd transforms written once: the 1-D transforms of each tile (WinogradF63, WinogradF23) over a
// vector type (simd/vec.h), and the tile drivers templated on the tile, for every ISA (lanes = channels,
// FMA) and for __ref (VecRef, one channel at a time, without FMA where the compiler does not contract).
//
// A tile T provides A (input patch), M (output tile), input_1d, output_1d and filter_1d; a 1-D transform
// reads r[i * rs] and writes o[i * os]. Drivers (layouts and contracts in winograd.h):
//   winograd_input<Vec, T, Pixels>    v = Bᵀ d B for 8 channels, in passes of L = Vec::lanes channels
//   winograd_output<Vec, T, Pixels>   y = act(Aᵀ m A + bias) likewise
//   winograd_filter_panel<Vec, T>     u = G g Gᵀ of one 16-channel panel (the lean kernels, run time)
//   winograd_input_ref<T>, winograd_output_ref<T>   the scalar references, one channel at a time
//   winograd_gemm_vec<Vec>            the element-wise stage, 6 tiles x 16 output channels
// Pixels moves a row of a tile between pixels and lanes: WinogradPixels<Vec> loads A pixels of L channels
// as L x L transposes (A a multiple of L) and stores an output row by transposes (T::M > 2) or through a
// buffer (F(2,3)'s two pixels); an ISA may pass its own (the AVX2 F(2,3) input pairs channels l, l + 4).
// Kept specialised: winograd_f32_6x16__avx512 (12 FMA chains over even and odd channels where this
// template's 6 would leave two 512-bit FMA pipes idle; its file says why); the AVX-512 table uses the
// AVX2 input and output transforms (8 channels per call, so a 16-lane vector would be half empty).
// Everything here has internal linkage (anonymous namespace): each ISA translation unit gets its own copy
// compiled with its own flags, so no AVX2 code can leak into baseline code (STYLE.md §3).
#pragma once

#include <cstdint>

#include "common/macros.h"
#include "kernels/simd/vec_ref.h"
#include "kernels/winograd/winograd.h"

namespace flexpipe {
namespace {

// a * s and a * s + c with a scalar constant s.
template <class Vec>
inline typename Vec::V wmul(typename Vec::V a, float s) {
    return Vec::mul(a, Vec::set1(s));
}
template <class Vec>
inline typename Vec::V wmadd(typename Vec::V a, float s, typename Vec::V c) {
    return Vec::fma(a, Vec::set1(s), c);
}

struct WinogradF63 {
    static constexpr int A = 8, M = 6;

    // Input, o = Bᵀ r on 8 values (strided), factored as in NNPACK/ncnn:
    //   o0 = (r0 - r6) + 5.25 (r4 - r2)                o7 = (r7 - r1) + 5.25 (r3 - r5)
    //   o1,2 = (r2 + r6 - 4.25 r4) ± (r1 + r5 - 4.25 r3)
    //   o3,4 = (r6 + 0.25 r2 - 1.25 r4) ± (0.5 r1 - 2.5 r3 + 2 r5)
    //   o5,6 = (r6 + 4 (r2 - 1.25 r4)) ± (2 r1 - 2.5 r3 + 0.5 r5)
    template <class Vec, class V = typename Vec::V>
    static void input_1d(const V* r, int rs, V* o, int os) {
        const V r0 = r[0], r1 = r[rs], r2 = r[2 * rs], r3 = r[3 * rs];
        const V r4 = r[4 * rs], r5 = r[5 * rs], r6 = r[6 * rs], r7 = r[7 * rs];
        o[0] = wmadd<Vec>(Vec::sub(r4, r2), 5.25f, Vec::sub(r0, r6));
        o[7 * os] = wmadd<Vec>(Vec::sub(r3, r5), 5.25f, Vec::sub(r7, r1));
        V a = wmadd<Vec>(r4, -4.25f, Vec::add(r2, r6));
        V b = wmadd<Vec>(r3, -4.25f, Vec::add(r1, r5));
        o[os] = Vec::add(a, b);
        o[2 * os] = Vec::sub(a, b);
        a = wmadd<Vec>(r4, -1.25f, wmadd<Vec>(r2, 0.25f, r6));
        b = wmadd<Vec>(r5, 2.0f, wmadd<Vec>(r3, -2.5f, wmul<Vec>(r1, 0.5f)));
        o[3 * os] = Vec::add(a, b);
        o[4 * os] = Vec::sub(a, b);
        a = wmadd<Vec>(wmadd<Vec>(r4, -1.25f, r2), 4.0f, r6);
        b = wmadd<Vec>(r5, 0.5f, wmadd<Vec>(r3, -2.5f, wmul<Vec>(r1, 2.0f)));
        o[5 * os] = Vec::add(a, b);
        o[6 * os] = Vec::sub(a, b);
    }

    // Output, o = Aᵀ r (6 x 8), with s_k = r_k + r_(k+1), d_k = r_k - r_(k+1) (k = 1, 3, 5):
    //   o0 = r0 + s1 + s3 + 32 s5      o1 = d1 + 2 d3 + 16 d5      o2 = s1 + 4 s3 + 8 s5
    //   o3 = d1 + 8 d3 + 4 d5          o4 = s1 + 16 s3 + 2 s5      o5 = r7 + d1 + 32 d3 + d5
    template <class Vec, class V = typename Vec::V>
    static void output_1d(const V* r, int rs, V* o, int os) {
        const V s1 = Vec::add(r[rs], r[2 * rs]), d1 = Vec::sub(r[rs], r[2 * rs]);
        const V s3 = Vec::add(r[3 * rs], r[4 * rs]), d3 = Vec::sub(r[3 * rs], r[4 * rs]);
        const V s5 = Vec::add(r[5 * rs], r[6 * rs]), d5 = Vec::sub(r[5 * rs], r[6 * rs]);
        o[0] = wmadd<Vec>(s5, 32.0f, Vec::add(Vec::add(r[0], s1), s3));
        o[os] = wmadd<Vec>(d5, 16.0f, wmadd<Vec>(d3, 2.0f, d1));
        o[2 * os] = wmadd<Vec>(s5, 8.0f, wmadd<Vec>(s3, 4.0f, s1));
        o[3 * os] = wmadd<Vec>(d5, 4.0f, wmadd<Vec>(d3, 8.0f, d1));
        o[4 * os] = wmadd<Vec>(s5, 2.0f, wmadd<Vec>(s3, 16.0f, s1));
        o[5 * os] = Vec::add(wmadd<Vec>(d3, 32.0f, Vec::add(r[7 * rs], d1)), d5);
    }

    // Filter, u = G g (8 x 3), G as in winograd_f32_f63__ref.cc:
    //   u0 = g0   u1,2 = -2/9 ((g0 + g2) ± g1)   u3,4 = (g0 / 90 + 2 g2 / 45) ± g1 / 45
    //   u5,6 = (g0 / 45 + g2 / 180) ± g1 / 90    u7 = g2
    template <class Vec, class V = typename Vec::V>
    static void filter_1d(const V* g, int gs, V* u, int us) {
        const V g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
        const V s = Vec::add(g0, g2);
        u[0] = g0;
        u[us] = wmul<Vec>(Vec::add(s, g1), -2.0f / 9);
        u[2 * us] = wmul<Vec>(Vec::sub(s, g1), -2.0f / 9);
        const V a = wmadd<Vec>(g2, 2.0f / 45, wmul<Vec>(g0, 1.0f / 90));
        u[3 * us] = wmadd<Vec>(g1, 1.0f / 45, a);
        u[4 * us] = wmadd<Vec>(g1, -1.0f / 45, a);
        const V b = wmadd<Vec>(g2, 1.0f / 180, wmul<Vec>(g0, 1.0f / 45));
        u[5 * us] = wmadd<Vec>(g1, 1.0f / 90, b);
        u[6 * us] = wmadd<Vec>(g1, -1.0f / 90, b);
        u[7 * us] = g2;
    }

    // The same in double, term by term (the offline transform, winograd_filter_ref):
    //   G = [1 0 0; -2/9 -2/9 -2/9; -2/9 2/9 -2/9; 1/90 1/45 2/45; 1/90 -1/45 2/45;
    //        1/45 1/90 1/180; 1/45 -1/90 1/180; 0 0 1]
    // (rows 5 and 6 are the points ±1/2 scaled by 1/32; Aᵀ's columns 5 and 6 carry the factor 32 back).
    static void filter_1d_exact(const double* g, int gs, double* u, int us) {
        const double g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
        u[0] = g0;
        u[us] = -2.0 / 9 * (g0 + g1 + g2);
        u[2 * us] = -2.0 / 9 * (g0 - g1 + g2);
        u[3 * us] = g0 / 90 + g1 / 45 + g2 * 2 / 45;
        u[4 * us] = g0 / 90 - g1 / 45 + g2 * 2 / 45;
        u[5 * us] = g0 / 45 + g1 / 90 + g2 / 180;
        u[6 * us] = g0 / 45 - g1 / 90 + g2 / 180;
        u[7 * us] = g2;
    }
};

struct WinogradF23 {
    static constexpr int A = 4, M = 2;

    // Input, o = Bᵀ r, Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
    template <class Vec, class V = typename Vec::V>
    static void input_1d(const V* r, int rs, V* o, int os) {
        o[0] = Vec::sub(r[0], r[2 * rs]);
        o[os] = Vec::add(r[rs], r[2 * rs]);
        o[2 * os] = Vec::sub(r[2 * rs], r[rs]);
        o[3 * os] = Vec::sub(r[rs], r[3 * rs]);
    }

    // Output, o = Aᵀ r, Aᵀ = [1 1 1 0; 0 1 -1 -1].
    template <class Vec, class V = typename Vec::V>
    static void output_1d(const V* r, int rs, V* o, int os) {
        o[0] = Vec::add(Vec::add(r[0], r[rs]), r[2 * rs]);
        o[os] = Vec::sub(Vec::sub(r[rs], r[2 * rs]), r[3 * rs]);
    }

    // Filter, u = G g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] (prepack's offline transform computes
    // the same in double).
    template <class Vec, class V = typename Vec::V>
    static void filter_1d(const V* g, int gs, V* u, int us) {
        const V g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
        const V e = wmul<Vec>(Vec::add(g0, g2), 0.5f);
        u[0] = g0;
        u[us] = wmadd<Vec>(g1, 0.5f, e);
        u[2 * us] = wmadd<Vec>(g1, -0.5f, e);
        u[3 * us] = g2;
    }

    static void filter_1d_exact(const double* g, int gs, double* u, int us) {
        const double g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
        u[0] = g0;
        u[us] = 0.5 * (g0 + g1 + g2);
        u[2 * us] = 0.5 * (g0 - g1 + g2);
        u[3 * us] = g2;
    }
};

// The filter transform of one 16-channel panel at run time (the lean Winograd kernels): a is the narrow
// GEMM's panel [C * 9][16] (kernels/gemm/narrow.h; row c * 9 + kh * 3 + kw), u the transformed panel
// [A²][C][16] (layout of winograd.h). Lanes are output channels, L at a time. r = (G g) Gᵀ, as the offline
// transform orders it.
template <class Vec, class T>
void winograd_filter_panel(const float* a, int64_t C, float* u) {
    using V = typename Vec::V;
    constexpr int A = T::A;
    for (int64_t c = 0; c < C; ++c) {
        for (int l = 0; l < 16; l += Vec::lanes) {
            V g[9], t[A * 3], r[A * A];
            for (int i = 0; i < 9; ++i) g[i] = Vec::load(a + (c * 9 + i) * 16 + l);
            for (int j = 0; j < 3; ++j) T::template filter_1d<Vec>(g + j, 3, t + j, 3);      // t = G g   (A x 3)
            for (int k = 0; k < A; ++k) T::template filter_1d<Vec>(t + 3 * k, 1, r + A * k, 1);  // r = t Gᵀ (A x A)
            for (int xi = 0; xi < A * A; ++xi) Vec::store(u + (xi * C + c) * 16 + l, r[xi]);
        }
    }
}

template <class Vec>
struct WinogradPixels {
    using V = typename Vec::V;
    static constexpr int L = Vec::lanes;

    // d[j] lane l = pixel (y, ix + j) of channel l, j < A (a multiple of L), zero outside the image or for
    // channels l >= nc; x points at channel 0's plane, channels `plane` floats apart.
    template <int A>
    static void load_row(const float* x, int64_t plane, int64_t h, int64_t w, int64_t y, int64_t ix, int nc, V* d) {
        if (y < 0 || y >= h) {
            for (int j = 0; j < A; ++j) d[j] = Vec::zero();
            return;
        }
        V r[A];  // r[b + l]: pixels b .. b + L - 1 of channel l, then transposed in place
        if (ix >= 0 && ix + A <= w) {
            const float* row = x + y * w + ix;
            for (int b = 0; b < A; b += L)
                for (int l = 0; l < L; ++l) r[b + l] = l < nc ? Vec::load(row + l * plane + b) : Vec::zero();
        } else {
            alignas(alignof(V)) float buf[A][L];
            for (int b = 0; b < A; b += L) {
                for (int l = 0; l < L; ++l) {
                    for (int j = 0; j < L; ++j) {
                        const bool in = l < nc && ix + b + j >= 0 && ix + b + j < w;
                        buf[b + l][j] = in ? x[l * plane + y * w + ix + b + j] : 0.0f;
                    }
                    r[b + l] = Vec::load(buf[b + l]);
                }
            }
        }
        for (int b = 0; b < A; b += L) transpose_block(r + b, d + b);
    }

    // Pixels [0, cols) of channels l < nc of one output row: o[c] lane l = pixel c of channel l, c < M;
    // o has room for A vectors. Rows of M > 2 pixels are transposed (zero-padded to a multiple of L) and
    // stored per channel, whole when cols == M; F(2,3)'s two go through a buffer.
    template <int M, int A>
    static void store_row(V* o, float* yr, int64_t plane, int cols, int nc) {
        if constexpr (M > 2) {
            constexpr int P = (M + L - 1) / L * L;  // pixels after the transposes
            static_assert(P <= A, "the row buffer holds the padded pixels");
            for (int c = M; c < P; ++c) o[c] = Vec::zero();
            V t[P];  // t[b + l]: pixels b .. b + L - 1 of channel l
            for (int b = 0; b < P; b += L) transpose_block(o + b, t + b);
            if (cols == M) {
                for (int l = 0; l < nc; ++l) {
                    for (int b = 0; b + L <= M; b += L) Vec::store(yr + l * plane + b, t[b + l]);
                    if constexpr (M % L != 0) Vec::template store_n<M % L>(yr + l * plane + M / L * L, t[M / L * L + l]);
                }
            } else {
                for (int l = 0; l < nc; ++l) {
                    alignas(alignof(V)) float buf[P];
                    for (int b = 0; b < P; b += L) Vec::store(buf + b, t[b + l]);
                    for (int c = 0; c < cols; ++c) yr[l * plane + c] = buf[c];
                }
            }
        } else {
            alignas(alignof(V)) float px[M][L];
            for (int c = 0; c < M; ++c) Vec::store(px[c], o[c]);
            for (int l = 0; l < nc; ++l) {
                yr[l * plane] = px[0][l];
                if (cols == 2) yr[l * plane + 1] = px[1][l];
            }
        }
    }

  private:
    // out[j] lane l = in[l] lane j for an L x L block.
    static void transpose_block(const V* in, V* out) {
        V r[L];
        for (int l = 0; l < L; ++l) r[l] = in[l];
        Vec::transpose(r);
        for (int j = 0; j < L; ++j) out[j] = r[j];
    }
};

// v[ξ * v_stride + l] for ξ < A², l < 8 (winograd.h): channel passes of L lanes; rows of the patch go
// through T::input_1d (t = d B), then its columns (Bᵀ t).
template <class Vec, class T, class Pixels = WinogradPixels<Vec>>
void winograd_input(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix, int nc, float* v,
                    int64_t v_stride) {
    using V = typename Vec::V;
    constexpr int A = T::A, L = Vec::lanes;
    static_assert(winograd_lanes % L == 0, "whole passes of L channels");
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
#pragma GCC unroll 8
    for (int c0 = 0; c0 < winograd_lanes; c0 += L) {  // a constant trip count: AVX2 runs one pass, NEON two
        const int n = L == winograd_lanes ? nc : nc - c0 < 0 ? 0 : (nc - c0 > L ? L : nc - c0);  // channels here
        const float* xc = n > 0 ? x + c0 * plane : x;
        V t[A * A];
        for (int i = 0; i < A; ++i) {
            V d[A];
            Pixels::template load_row<A>(xc, plane, h, w, iy + i, ix, n, d);
            T::template input_1d<Vec>(d, 1, t + A * i, 1);  // t = d B (row i)
        }
        for (int j = 0; j < A; ++j) {
            V r[A];
            T::template input_1d<Vec>(t + j, A, r, 1);  // column j of Bᵀ t
            for (int k = 0; k < A; ++k) Vec::store(v + (k * A + j) * v_stride + c0, r[k]);
        }
    }
}

// y + l * plane + r * w + c for r < rows, c < cols, l < nc: act(Aᵀ m A + bias), channel passes of L lanes;
// columns first (t = Aᵀ m), then each output row (o = t A).
template <class Vec, class T, class Pixels = WinogradPixels<Vec>>
void winograd_output(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane, int64_t w, int rows,
                     int cols, int nc, const ConvActivation& act) {
    using V = typename Vec::V;
    constexpr int A = T::A, M = T::M, L = Vec::lanes;
    static_assert(winograd_lanes % L == 0, "whole passes of L channels");
    FLEXPIPE_DCHECK(rows >= 1 && rows <= M && cols >= 1 && cols <= M && nc >= 1 && nc <= winograd_lanes);
#pragma GCC unroll 8
    for (int c0 = 0; c0 < winograd_lanes; c0 += L) {  // a constant trip count: AVX2 runs one pass, NEON two
        if (c0 >= nc) break;
        const int n = L == winograd_lanes ? nc : nc - c0 > L ? L : nc - c0;
        V t[M * A];
        for (int j = 0; j < A; ++j) {
            V r[A];
            for (int i = 0; i < A; ++i) r[i] = Vec::load(m + (i * A + j) * m_stride + c0);
            T::template output_1d<Vec>(r, 1, t + j, A);  // column j of t = Aᵀ r (M x A)
        }
        alignas(alignof(V)) float bl[L] = {0.0f};
        for (int l = 0; l < n && bias; ++l) bl[l] = bias[c0 + l];
        const V b = Vec::load(bl), lo = Vec::set1(act.lo), hi = Vec::set1(act.hi);
        for (int k = 0; k < rows; ++k) {
            V o[A];
            T::template output_1d<Vec>(t + A * k, 1, o, 1);  // row k of o = t A
            for (int c = 0; c < M; ++c) {
                o[c] = Vec::add(o[c], b);
                if (act.clamp) o[c] = Vec::clamp(o[c], lo, hi);  // NaN stays NaN
            }
            Pixels::template store_row<M, A>(o, y + c0 * plane + k * w, plane, cols, n);
        }
    }
}

// The offline filter transform (plan time) in double: w [M, C, 3, 3] -> u [Mp / 16][A²][C][16], zero for
// output channels past M.
template <class T>
void winograd_filter_ref(const float* w, int64_t M, int64_t C, float* u) {
    constexpr int A = T::A;
    const int64_t panels = (M + winograd_nr - 1) / winograd_nr;
    for (int64_t i = 0; i < A * A * panels * C * winograd_nr; ++i) u[i] = 0.0f;
    for (int64_t oc = 0; oc < M; ++oc) {
        for (int64_t c = 0; c < C; ++c) {
            double g[9], t[A * 3], r[A * A];
            for (int i = 0; i < 9; ++i) g[i] = w[(oc * C + c) * 9 + i];
            for (int j = 0; j < 3; ++j) T::filter_1d_exact(g + j, 3, t + j, 3);          // t = G g   (A x 3)
            for (int k = 0; k < A; ++k) T::filter_1d_exact(t + 3 * k, 1, r + A * k, 1);  // r = t Gᵀ (A x A)
            for (int xi = 0; xi < A * A; ++xi) {
                u[(((oc / winograd_nr) * A * A + xi) * C + c) * winograd_nr + oc % winograd_nr] =
                    static_cast<float>(r[xi]);
            }
        }
    }
}

// The scalar reference input transform: one channel at a time, pixels read with bounds checks.
template <class T>
void winograd_input_ref(const float* x, int64_t plane, int64_t h, int64_t w, int64_t iy, int64_t ix, int nc, float* v,
                        int64_t v_stride) {
    constexpr int A = T::A;
    FLEXPIPE_DCHECK(nc >= 0 && nc <= winograd_lanes);
    for (int l = 0; l < winograd_lanes; ++l) {
        float d[A * A], t[A * A], r[A * A];
        for (int i = 0; i < A; ++i) {
            for (int j = 0; j < A; ++j) {
                const int64_t yy = iy + i, xx = ix + j;
                const bool in = l < nc && yy >= 0 && yy < h && xx >= 0 && xx < w;
                d[i * A + j] = in ? x[l * plane + yy * w + xx] : 0.0f;
            }
        }
        for (int i = 0; i < A; ++i) T::template input_1d<VecRef>(d + A * i, 1, t + A * i, 1);  // t = d B (rows)
        for (int j = 0; j < A; ++j) T::template input_1d<VecRef>(t + j, A, r + j, A);  // r = Bᵀ t (columns)
        for (int xi = 0; xi < A * A; ++xi) v[xi * v_stride + l] = r[xi];
    }
}

// The scalar reference output transform: one channel at a time.
template <class T>
void winograd_output_ref(const float* m, int64_t m_stride, const float* bias, float* y, int64_t plane, int64_t w,
                         int rows, int cols, int nc, const ConvActivation& act) {
    constexpr int A = T::A, M = T::M;
    FLEXPIPE_DCHECK(rows >= 1 && rows <= M && cols >= 1 && cols <= M && nc >= 1 && nc <= winograd_lanes);
    for (int l = 0; l < nc; ++l) {
        float r[A * A], t[M * A], o[M * M];
        for (int xi = 0; xi < A * A; ++xi) r[xi] = m[xi * m_stride + l];
        for (int j = 0; j < A; ++j) T::template output_1d<VecRef>(r + j, A, t + j, A);  // t = Aᵀ r (columns)
        for (int k = 0; k < M; ++k) T::template output_1d<VecRef>(t + A * k, 1, o + M * k, 1);  // o = t A (rows)
        const float b = bias ? bias[l] : 0.0f;
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < cols; ++j) {
                float val = o[i * M + j] + b;
                if (act.clamp) val = val < act.lo ? act.lo : (val > act.hi ? act.hi : val);
                y[l * plane + i * w + j] = val;
            }
        }
    }
}

// The element-wise stage: d[i][j] = sum_c a[i * a_stride + c] b[c * 16 + j] for 6 rows (tiles) x 16 output
// channels, 16 / L vectors per row (12 ymm or 24 NEON q accumulators). Per input channel: 16 / L loads of
// the U panel row, six broadcasts of V values, 6 * 16 / L FMAs. Rows past `rows` reuse the last valid row
// and are not stored.
template <class Vec>
void winograd_gemm_vec(int64_t k, const float* a, int64_t a_stride, const float* b, float* d, int64_t d_stride,
                       int rows) {
    using V = typename Vec::V;
    constexpr int L = Vec::lanes, NV = winograd_nr / L;
    FLEXPIPE_DCHECK(rows >= 1 && rows <= winograd_mr && k >= 1);
    const float* ar[winograd_mr];
    ar[0] = a;
    for (int i = 1; i < winograd_mr; ++i) ar[i] = i < rows ? ar[i - 1] + a_stride : ar[i - 1];
    V acc[winograd_mr][NV];
#pragma GCC unroll 6
    for (int i = 0; i < winograd_mr; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = Vec::zero();
    for (int64_t c = 0; c < k; ++c) {
        V bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) bv[v] = Vec::load(b + c * winograd_nr + L * v);
#pragma GCC unroll 6
        for (int i = 0; i < winograd_mr; ++i) {
            const V av = Vec::load1(ar[i] + c);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[i][v] = Vec::fma(av, bv[v], acc[i][v]);
        }
    }
    // Constant indexes only (a run-time row index would keep acc in memory through the loop above).
#pragma GCC unroll 6
    for (int i = 0; i < winograd_mr; ++i) {
        if (i >= rows) break;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) Vec::store(d + i * d_stride + L * v, acc[i][v]);
    }
}

}  // namespace
}  // namespace flexpipe
