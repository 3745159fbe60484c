// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: unary math, broadcasting binary rows, comparisons, select, clip, casts.
//
// How it works: the runtime driver (runtime/ops/eltwise_broadcast.h) collapses a numpy-broadcast
// iteration space into rows; every kernel here processes one row of n elements. A row operand has
// an element stride of 0 (one broadcast value) or 1 (dense); outputs are always dense. Kernels are
// single-threaded scalar references (__ref); the runtime splits rows over threads.
//
// Which dtype supports which op is decided by the runtime (runtime/ops/eltwise_support.cc); kernels
// assume a supported combination.
//
// Types: float16 ("Half") is storage only and is computed in float; bool is one byte, 0 or 1, and
// goes through the uint8 integer kernels for And/Or/Xor (0/1 in, 0/1 out). Kernels named by a dtype
// (unary_f32__ref) take typed pointers; kernels that serve every dtype or a dtype pair (cast, pow,
// compare, clip, where) take the DType and void pointers and switch once per row.
//
// Exactness: float kernels use the C library's functions of the element type (expf for float32),
// so results match numpy to about 1 ulp. Integer arithmetic wraps (two's complement) instead of
// being undefined behaviour; integer division or modulo by zero gives 0 and shifts by the bit width
// or more give 0 (ONNX leaves all of these undefined). Float to integer conversion truncates and
// saturates (NaN gives 0), again where ONNX leaves the result undefined.
//
// Op codes are part of the TS <-> native contract: keep them in sync with
// lib/model/ops/eltwise-codes.ts.
//
// SIMD fast paths (float32, *__avx2.cc / *__neon.cc, chosen through KernelTable::xf): binary
// Add/Sub/Mul/Div/Max/Min for dense rows and a broadcast scalar operand (which covers equal shapes,
// scalar broadcast and per-channel NCHW broadcast, whose rows are H*W long with a stride-0 channel
// value), bit-exact with __ref; unary Relu, LeakyRelu and Clip bit-exact; Sqrt exact (IEEE);
// HardSigmoid (alpha*x + beta may be fused into one FMA) and HardSwish (x * (1/6) instead of x / 6)
// within 2^-23 * max(1, |x|) of __ref; Exp, Erf, Tanh, Sigmoid, Swish, Gelu through the vector math below;
// every other op falls through to __ref.
//
// Vector math (kernels/eltwise/vmath_impl.h, written once over simd/vec.h: the same operations on every ISA),
// maximum errors measured over every float in the range against double-precision libm:
//   exp      [-87.3, 88.7]: 8.5e-8 relative (0.72 ulp); results below 2^-126 are subnormal and keep
//            an absolute error < 1.1e-45; 0 below -103.97, +inf above 88.72, NaN stays NaN.
//   erf      all x: 1.8e-7 relative (2.2 ulp, near |x| = 0.48 and 0.9), 1.3e-7 absolute.
//   tanh     all x: 1.5e-7 relative.
//   sigmoid  x >= -87: 2.1e-7 relative (below, the result is subnormal: absolute error < 1.1e-45).
//   swish    x * sigmoid(x): x >= -87: 2.8e-7 relative (sigmoid's and one rounding); below,
//            absolute error < 1.2e-44 * |x|.
//   gelu     x/2 * (1 + erf(x/sqrt 2)), the negative side through erfc without cancellation:
//            x >= -5.5: relative error <= 8e-7 + 1e-7 * x^2 (the rounding of x/sqrt 2 grows as x^2 into
//            erfc; 2.6e-6 at -5.5); below, |gelu| < 8.2e-8 and the result is 0.
//   gelu_tanh  x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): x >= -9: relative error
//            <= 4e-7 + 3.5e-7 * |u| (the rounding of u; 1.1e-5 at -9, where gelu_tanh ~ 1e-27); no
//            cancellation, so for x < 0 it is far closer to the true value than the ref's
//            x/2 * (1 + tanh(u)), whose absolute error is ~|x| * 2^-25.
// The parity tests (test/kernels/eltwise-simd.test.ts) check these bounds against float64 and bound
// |simd - ref| by them plus the ref's own error.
#pragma once

#include <cstdint>

#include "common/dtype.h"

namespace flexpipe {

// float16 storage (IEEE binary16 bits) and bool storage, as distinct types for templates.
struct Half {
    uint16_t bits;
};
struct Bool8 {
    uint8_t v;
};
static_assert(sizeof(Half) == 2, "Half must be 2 bytes");
static_assert(sizeof(Bool8) == 1, "Bool8 must be 1 byte");

enum class UnaryOp : int32_t {
    identity = 0,
    relu = 1,
    sigmoid = 2,
    tanh = 3,
    exp = 4,
    log = 5,
    sqrt = 6,
    erf = 7,
    abs = 8,
    neg = 9,
    reciprocal = 10,
    floor = 11,
    ceil = 12,
    round = 13,  // half to even
    sin = 14,
    cos = 15,
    tan = 16,
    asin = 17,
    acos = 18,
    atan = 19,
    sinh = 20,
    cosh = 21,
    asinh = 22,
    acosh = 23,
    atanh = 24,
    softplus = 25,
    softsign = 26,
    sign = 27,
    hard_sigmoid = 28,      // max(0, min(1, alpha*x + beta))
    hard_swish = 29,        // x * max(0, min(1, x/6 + 1/2))
    leaky_relu = 30,        // x < 0 ? alpha*x : x
    elu = 31,               // x < 0 ? alpha*(exp(x) - 1) : x
    selu = 32,              // x <= 0 ? gamma*(alpha*exp(x) - alpha) : gamma*x
    celu = 33,              // max(0, x) + min(0, alpha*(exp(x/alpha) - 1))
    thresholded_relu = 34,  // x > alpha ? x : 0
    gelu = 35,              // x/2 * (1 + erf(x/sqrt(2)))
    gelu_tanh = 36,         // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    mish = 37,              // x * tanh(softplus(x))
    shrink = 38,            // x < -alpha ? x + beta : x > alpha ? x - beta : 0  (alpha=lambd, beta=bias)
    logical_not = 39,       // bool only: x == 0
    swish = 40,             // x * sigmoid(x) (SiLU; an imported Sigmoid -> Mul pair, lib/model/fuse-swish.ts)
    count = 41,
};

// alpha/beta/gamma of the parametric unary functions (unused ones are ignored).
struct UnaryParams {
    double alpha = 0;
    double beta = 0;
    double gamma = 0;
};

enum class BinaryOp : int32_t {
    add = 0,
    sub = 1,
    mul = 2,
    div = 3,       // integers truncate toward zero, as C does
    pow = 4,       // same dtype for base and exponent (mixed dtypes: pow__ref)
    mod = 5,       // result takes the sign of the divisor (Python %)
    fmod = 6,      // result takes the sign of the dividend (C fmod, %)
    max = 7,       // NaN propagates
    min = 8,       // NaN propagates
    prelu = 9,     // a < 0 ? a*b : a
    shl = 10,      // integers only
    shr = 11,      // integers only (logical for unsigned, arithmetic for signed)
    bit_and = 12,  // integers and bool only
    bit_or = 13,   // integers and bool only
    bit_xor = 14,  // integers and bool only
    count = 15,
};

enum class CompareOp : int32_t {
    equal = 0,
    less = 1,
    greater = 2,
    less_equal = 3,
    greater_equal = 4,
    count = 5,
};

enum class ClassifyOp : int32_t {
    is_nan = 0,
    is_inf = 1,  // either sign
    is_pos_inf = 2,
    is_neg_inf = 3,
    count = 4,
};

// Unary, dense rows: y[i] = f(x[i]). x and y may be the same buffer.
void unary_f32__ref(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
void unary_f64__ref(UnaryOp op, const UnaryParams& p, const double* x, double* y, int64_t n);
void unary_f16__ref(UnaryOp op, const UnaryParams& p, const Half* x, Half* y, int64_t n);
// Integer dtypes and bool: identity, abs, neg, sign, relu; logical_not for bool.
void unary_int__ref(DType t, UnaryOp op, const void* x, void* y, int64_t n);

// Binary rows: y[i] = a[i*sa] (op) b[i*sb], sa and sb in {0, 1}. y may alias a or b when that
// operand's stride is 1.
void binary_f32__ref(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                     int64_t n);
void binary_f64__ref(BinaryOp op, const double* a, int64_t sa, const double* b, int64_t sb, double* y,
                     int64_t n);
void binary_f16__ref(BinaryOp op, const Half* a, int64_t sa, const Half* b, int64_t sb, Half* y, int64_t n);
// Integer dtypes; bool goes through as uint8.
void binary_int__ref(DType t, BinaryOp op, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                     int64_t n);

// Pow with base and exponent of any numeric dtypes; z has the base's dtype tx. Integer^integer is
// exact (repeated squaring, wrapping); otherwise computed in double and converted to tx.
void pow__ref(DType tx, DType ty, const void* x, int64_t sx, const void* y, int64_t sy, void* z, int64_t n);

// Comparison rows, any dtype (a and b share it): y[i] = a[i*sa] (op) b[i*sb] as 0/1.
void compare__ref(DType t, CompareOp op, const void* a, int64_t sa, const void* b, int64_t sb, uint8_t* y,
                  int64_t n);

// y[i] = classify(x[i]) as 0/1, float dtypes only.
void classify__ref(DType t, ClassifyOp op, const void* x, uint8_t* y, int64_t n);

// out[i] = c[i*sc] ? x[i*sx] : y[i*sy] for elements of elem_size bytes (1, 2, 4 or 8).
void where__ref(int64_t elem_size, const uint8_t* c, int64_t sc, const void* x, int64_t sx, const void* y,
                int64_t sy, void* out, int64_t n);

// y[i] = min(max(x[i], *lo), *hi), lo and hi point at one element of dtype t; NaN stays NaN.
void clip__ref(DType t, const void* x, void* y, int64_t n, const void* lo, const void* hi);

// y[i] = min(max(x[i], lo), hi): clip__ref on float32 (the kernel table's ref entry).
void clip_f32__ref(const float* x, float* y, int64_t n, float lo, float hi);

// SIMD variants of the float32 rows above (same contracts; see "SIMD fast paths").
using UnaryF32Fn = void (*)(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
using BinaryF32Fn = void (*)(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
using ClipF32Fn = void (*)(const float* x, float* y, int64_t n, float lo, float hi);
void unary_f32__avx2(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
void unary_f32__avx512(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
void unary_f32__neon(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n);
void binary_f32__avx2(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
void binary_f32__neon(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
// y[i] = min(max(x[i], lo), hi) for float32, bit-exact with clip__ref.
void clip_f32__avx2(const float* x, float* y, int64_t n, float lo, float hi);
void clip_f32__neon(const float* x, float* y, int64_t n, float lo, float hi);

// y[i] = (dst) x[i] for every pair of known dtypes; to bool is x != 0.
void cast__ref(DType src, DType dst, const void* x, void* y, int64_t n);

}  // namespace flexpipe
