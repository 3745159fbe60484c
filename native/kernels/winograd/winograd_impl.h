// SPDX-License-Identifier: Apache-2.0
// The 1-D Winograd transforms, written once over a vector type so every ISA file computes the same
// expressions (ref: float without FMA; SIMD: lanes = channels, FMA).
//
// An ops struct O provides: using V; static V add(V, V); sub(V, V); mul(V, float); madd(V a, float s, V c)
// = a * s + c; and for filter_panel also lanes, load(const float*) and store(float*, V). ScalarOps is
// below; the SIMD ones are in winograd_ops_<isa>.h (AVX-512's in its one file). Everything here has
// internal linkage (anonymous namespace): each ISA translation unit gets its own copy compiled with its
// own flags, so no AVX2 code can leak into baseline code (STYLE.md §3).
#pragma once

namespace flexpipe {
namespace {

// F(6,3) input, o = Bᵀ r on 8 values (strided), factored as in NNPACK/ncnn:
//   o0 = (r0 - r6) + 5.25 (r4 - r2)                o7 = (r7 - r1) + 5.25 (r3 - r5)
//   o1,2 = (r2 + r6 - 4.25 r4) ± (r1 + r5 - 4.25 r3)
//   o3,4 = (r6 + 0.25 r2 - 1.25 r4) ± (0.5 r1 - 2.5 r3 + 2 r5)
//   o5,6 = (r6 + 4 (r2 - 1.25 r4)) ± (2 r1 - 2.5 r3 + 0.5 r5)
template <class O>
inline void f63_input_1d(const typename O::V* r, int rs, typename O::V* o, int os) {
    using V = typename O::V;
    const V r0 = r[0], r1 = r[rs], r2 = r[2 * rs], r3 = r[3 * rs];
    const V r4 = r[4 * rs], r5 = r[5 * rs], r6 = r[6 * rs], r7 = r[7 * rs];
    o[0] = O::madd(O::sub(r4, r2), 5.25f, O::sub(r0, r6));
    o[7 * os] = O::madd(O::sub(r3, r5), 5.25f, O::sub(r7, r1));
    V a = O::madd(r4, -4.25f, O::add(r2, r6));
    V b = O::madd(r3, -4.25f, O::add(r1, r5));
    o[os] = O::add(a, b);
    o[2 * os] = O::sub(a, b);
    a = O::madd(r4, -1.25f, O::madd(r2, 0.25f, r6));
    b = O::madd(r5, 2.0f, O::madd(r3, -2.5f, O::mul(r1, 0.5f)));
    o[3 * os] = O::add(a, b);
    o[4 * os] = O::sub(a, b);
    a = O::madd(O::madd(r4, -1.25f, r2), 4.0f, r6);
    b = O::madd(r5, 0.5f, O::madd(r3, -2.5f, O::mul(r1, 2.0f)));
    o[5 * os] = O::add(a, b);
    o[6 * os] = O::sub(a, b);
}

// F(6,3) output, o = Aᵀ r (6 x 8), with s_k = r_k + r_(k+1), d_k = r_k - r_(k+1) (k = 1, 3, 5):
//   o0 = r0 + s1 + s3 + 32 s5      o1 = d1 + 2 d3 + 16 d5      o2 = s1 + 4 s3 + 8 s5
//   o3 = d1 + 8 d3 + 4 d5          o4 = s1 + 16 s3 + 2 s5      o5 = r7 + d1 + 32 d3 + d5
template <class O>
inline void f63_output_1d(const typename O::V* r, int rs, typename O::V* o, int os) {
    using V = typename O::V;
    const V s1 = O::add(r[rs], r[2 * rs]), d1 = O::sub(r[rs], r[2 * rs]);
    const V s3 = O::add(r[3 * rs], r[4 * rs]), d3 = O::sub(r[3 * rs], r[4 * rs]);
    const V s5 = O::add(r[5 * rs], r[6 * rs]), d5 = O::sub(r[5 * rs], r[6 * rs]);
    o[0] = O::madd(s5, 32.0f, O::add(O::add(r[0], s1), s3));
    o[os] = O::madd(d5, 16.0f, O::madd(d3, 2.0f, d1));
    o[2 * os] = O::madd(s5, 8.0f, O::madd(s3, 4.0f, s1));
    o[3 * os] = O::madd(d5, 4.0f, O::madd(d3, 8.0f, d1));
    o[4 * os] = O::madd(s5, 2.0f, O::madd(s3, 16.0f, s1));
    o[5 * os] = O::add(O::madd(d3, 32.0f, O::add(r[7 * rs], d1)), d5);
}

// F(2,3) input, o = Bᵀ r, Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
template <class O>
inline void f23_input_1d(const typename O::V* r, int rs, typename O::V* o, int os) {
    o[0] = O::sub(r[0], r[2 * rs]);
    o[os] = O::add(r[rs], r[2 * rs]);
    o[2 * os] = O::sub(r[2 * rs], r[rs]);
    o[3 * os] = O::sub(r[rs], r[3 * rs]);
}

// F(2,3) output, o = Aᵀ r, Aᵀ = [1 1 1 0; 0 1 -1 -1].
template <class O>
inline void f23_output_1d(const typename O::V* r, int rs, typename O::V* o, int os) {
    o[0] = O::add(O::add(r[0], r[rs]), r[2 * rs]);
    o[os] = O::sub(O::sub(r[rs], r[2 * rs]), r[3 * rs]);
}

// F(2,3) filter, u = G g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] (the run-time transform of the
// lean Winograd kernels; prepack's offline transform computes the same in double).
template <class O>
inline void f23_filter_1d(const typename O::V* g, int gs, typename O::V* u, int us) {
    using V = typename O::V;
    const V g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
    const V e = O::mul(O::add(g0, g2), 0.5f);
    u[0] = g0;
    u[us] = O::madd(g1, 0.5f, e);
    u[2 * us] = O::madd(g1, -0.5f, e);
    u[3 * us] = g2;
}

// F(6,3) filter, u = G g (8 x 3), G as in winograd_f32_f63__ref.cc:
//   u0 = g0   u1,2 = -2/9 ((g0 + g2) ± g1)   u3,4 = (g0 / 90 + 2 g2 / 45) ± g1 / 45
//   u5,6 = (g0 / 45 + g2 / 180) ± g1 / 90    u7 = g2
template <class O>
inline void f63_filter_1d(const typename O::V* g, int gs, typename O::V* u, int us) {
    using V = typename O::V;
    const V g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
    const V s = O::add(g0, g2);
    u[0] = g0;
    u[us] = O::mul(O::add(s, g1), -2.0f / 9);
    u[2 * us] = O::mul(O::sub(s, g1), -2.0f / 9);
    const V a = O::madd(g2, 2.0f / 45, O::mul(g0, 1.0f / 90));
    u[3 * us] = O::madd(g1, 1.0f / 45, a);
    u[4 * us] = O::madd(g1, -1.0f / 45, a);
    const V b = O::madd(g2, 1.0f / 180, O::mul(g0, 1.0f / 45));
    u[5 * us] = O::madd(g1, 1.0f / 90, b);
    u[6 * us] = O::madd(g1, -1.0f / 90, b);
    u[7 * us] = g2;
}

// The filter transform of one 16-channel panel at run time (the lean Winograd kernels): a is the narrow
// GEMM's panel [C * 9][16] (kernels/gemm/narrow.h; row c * 9 + kh * 3 + kw), u the transformed panel
// [A²][C][16] (layout of winograd.h). Lanes are output channels, O::lanes at a time (O's lanes, load
// and store: ScalarOps below, winograd_ops_<isa>.h). r = (G g) Gᵀ, as the offline transform orders it.
template <class O, int A>
inline void filter_panel(const float* a, int64_t C, float* u) {
    using V = typename O::V;
    for (int64_t c = 0; c < C; ++c) {
        for (int l = 0; l < 16; l += O::lanes) {
            V g[9], t[A * 3], r[A * A];
            for (int i = 0; i < 9; ++i) g[i] = O::load(a + (c * 9 + i) * 16 + l);
            for (int j = 0; j < 3; ++j) {
                if (A == 8) f63_filter_1d<O>(g + j, 3, t + j, 3);  // t = G g   (A x 3)
                else f23_filter_1d<O>(g + j, 3, t + j, 3);
            }
            for (int k = 0; k < A; ++k) {
                if (A == 8) f63_filter_1d<O>(t + 3 * k, 1, r + A * k, 1);  // r = t Gᵀ (A x A)
                else f23_filter_1d<O>(t + 3 * k, 1, r + A * k, 1);
            }
            for (int xi = 0; xi < A * A; ++xi) O::store(u + (xi * C + c) * 16 + l, r[xi]);
        }
    }
}

// Scalar ops (the reference: separate multiply and add, no FMA).
struct ScalarOps {
    using V = float;
    static constexpr int lanes = 1;
    static float load(const float* p) { return *p; }
    static void store(float* p, float v) { *p = v; }
    static float add(float a, float b) { return a + b; }
    static float sub(float a, float b) { return a - b; }
    static float mul(float a, float s) { return a * s; }
    static float madd(float a, float s, float c) {
        const float p = a * s;  // kept as two roundings, like the compiler without -ffp-contract
        return p + c;
    }
};

}  // namespace
}  // namespace flexpipe
