// SPDX-License-Identifier: Apache-2.0
// The vector abstraction the SIMD kernel families are written over once (contract; one struct per ISA).
//
// A family template (e.g. conv/conv_direct.h) takes a Vec struct and every ISA file instantiates it with
// its own: VecRef (vec_ref.h, one float lane, the scalar model), VecAvx2 (vec_avx2.h, 8 lanes, AVX2 +
// FMA), VecAvx512 (vec_avx512.h, 16 lanes, AVX-512F), VecNeon (vec_neon.h, 4 lanes, aarch64 NEON). Each
// struct has only static inline members, and lives with the family templates in an anonymous namespace:
// every translation unit compiles its own copy with its own flags, so no AVX2 code can be linked into
// baseline code (STYLE.md §3, the ODR rule for ISA files). Include a vec_<isa>.h only from files built
// for that ISA (*__avx2.cc, *__avx512.cc, *__neon.cc; vec_ref.h from anywhere).
//
// Every struct provides, lane-wise and with IEEE single-precision rounding unless stated:
//   V, M, lanes          the register type, the lane-mask type of comparisons, the float lanes per V
//   masked_memory        true when load_first / store_first are single masked instructions (AVX): a
//                        template may then use them inside hot loops; otherwise (NEON, ref) they go
//                        through a stack buffer and a template keeps them to the tails
//   load(p) store(p, v)  lanes floats at p, no alignment needed
//   load1(p) set1(s)     every lane *p, or s;  zero()
//   load_first(p, n)     lanes [0, n) from p[0, n), the others 0, for 0 <= n <= lanes; reads nothing else
//   store_first(p, n, v) writes p[0, n) from lanes [0, n), nothing else
//   store_n<N>(p, v)     the same for a constant 0 < N < lanes, with plain (narrower) stores
//   load_evens(p)        lane i = p[2 i] (reads p[0, 2 lanes - 1])
//   load_strided(p, s)   lane i = p[i s] (reads those floats only)
//   load_taps_s2(p, t)   t[k] lane i = p[2 i + k] for k < 3: a stride-2 window of three taps (reads
//                        p[0, 2 lanes])
//   load_evens_raw(p), load_taps_s2_raw(p, t), evens_order(v)   the same lanes in an ISA-defined order
//                        that is the same for every p (AVX2: [0 2 8 10 | 4 6 12 14]), for lane-wise
//                        reductions that put the result in order once, with evens_order; reads p[0, 2 lanes)
//                        and p[0, 2 lanes + 2)
//   gather(x, idx)       lane i = x[idx[i]] (int32 indices)
//   add sub mul div sqrt
//   fma(a, b, c)         a * b + c, rounded once (VecRef: as the compiler contracts it);  fms(a, b, c):
//                        a * b - c, and fnma(a, b, c): c - a * b, likewise
//   abs(a), round(a)     |a|, and a rounded to the nearest integer (ties to even)
//   or_sign(y, x), xor_sign(y, x)   y with x's sign bit OR-ed or XOR-ed into its own
//   scale_pow2(y, n)     y * 2^n for integral n in [-150, 128], as y * 2^(n >> 1) * 2^(n - (n >> 1)) so that
//                        subnormal and near-overflow results come out right
//   lt gt ge (a, b)      a < b etc. as M (false for NaN);  isnan(a);  first_lanes(n): lanes [0, n) true
//   select(m, a, b)      m ? a : b;  zero_if(m, a): m ? 0 : a
//   max(a, b), min(a, b) exactly a > b ? a : b and a < b ? a : b (the scalar references' expressions:
//                        a NaN in either gives b; -0 and +0 keep their order of operands)
//   clamp(v, lo, hi)     (v < lo ? lo : v), then (> hi ? hi : that): NaN passes, as the scalar clamp
//   max_nan(a, b), min_nan(a, b)   (a is NaN or a > b) ? a : b, and likewise with <: ONNX Max and Min,
//                        NaN propagating from either operand
//   max_fast(a, b), min_fast(a, b)   the ISA's own max and min: max(a, b), min(a, b) for non-NaN lanes;
//                        a NaN in b gives NaN, a NaN in a gives NaN (NEON) or b (AVX). For reductions whose NaN
//                        result is unspecified, and clamps of a value b that must keep its NaN
//   hsum(v), hmax(v)     the sum (in an ISA-defined order) and the max of the lanes (not NaN)
//   hsum_double(v)       the sum of the lanes in double
//   D, dzero(), dadd(a, b), dadd_low(d, v), dadd_high(d, v), dsum(d)   a vector of lanes / 2 doubles:
//                        d + the low or high half of v's lanes widened, and the sum of d's lanes in order
//   transpose(r)         r is lanes vectors: r[i] lane j and r[j] lane i swap (a square transpose)
#pragma once
