// SPDX-License-Identifier: Apache-2.0
// The float32 element-wise SIMD paths (kernels/eltwise/*__avx2.cc, *__neon.cc) on every ISA:
//  - binary Add/Sub/Mul/Div/Max/Min bit-exact with ref for dense/dense, broadcast/dense and
//    dense/broadcast rows (equal shapes, scalar and per-channel broadcast reach the kernel as these),
//    with NaN, +-0, +-inf and subnormal operands, in place, every other binary op equal to ref;
//  - Relu, LeakyRelu, Sqrt and Clip bit-exact, every op without a fast path equal to ref;
//  - exp, erf, tanh, sigmoid, swish, gelu, gelu_tanh within their stated error (kernels/eltwise/eltwise.h)
//    of a float64 truth, and within that plus the ref's own error of ref; HardSigmoid and HardSwish
//    within 2^-22 of ref.
// Lengths 1..67 and longer, inputs and outputs misaligned by 4 bytes, a canary after the output.
import t from 'tap'
import { Guarded, isas, lengths, random, simdIsas, xf } from '../helpers/xf.js'

const U = { relu: 1, sigmoid: 2, tanh: 3, exp: 4, sqrt: 6, erf: 7, abs: 8, hardSigmoid: 28, hardSwish: 29, leakyRelu: 30, gelu: 35, geluTanh: 36, swish: 40 }
const B = { add: 0, sub: 1, mul: 2, div: 3, pow: 4, mod: 5, fmod: 6, max: 7, min: 8, prelu: 9 }

const bits = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length)

/** Index of the first element whose bits differ, or -1. */
function firstBitDiff(a: Float32Array, b: Float32Array): number {
  const x = bits(a)
  const y = bits(b)
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i
  return -1
}

/** Random values with specials sprinkled in (one NaN bit pattern, so operand order cannot matter). */
function special(n: number, seed: number, scale = 10): Float32Array {
  const a = random(n, seed, -scale, scale)
  const pool = [NaN, 0, -0, Infinity, -Infinity, 1e-40, -1e-40, 3.4e38, 1]
  for (let i = seed % 5; i < n; i += 5) a[i] = pool[(i + seed) % pool.length]!
  return a
}

for (const isa of simdIsas) {
  t.test(`binary_f32 ${isa} equals ref bit for bit`, async (t) => {
    let bad = 0
    for (const op of Object.values(B)) {
      for (const [sa, sb] of [[1, 1], [0, 1], [1, 0], [0, 0]] as const) {
        for (const n of lengths) {
          const a = Guarded.of(special(sa ? n : 1, n * 31 + op))
          const b = Guarded.of(special(sb ? n : 1, n * 37 + op + 1))
          if (op === B.pow || op === B.mod || op === B.fmod) b.view.set(random(b.view.length, n, 0.5, 3))
          const want = new Float32Array(n)
          xf.xfBinary('ref', op, a.view, sa, b.view, sb, want, n)
          const y = new Guarded(n, 5)
          xf.xfBinary(isa, op, a.view, sa, b.view, sb, y.view, n)
          const i = firstBitDiff(y.view, want)
          if ((i >= 0 || !y.intact()) && bad++ < 10) {
            t.fail(`op=${op} sa=${sa} sb=${sb} n=${n}: element ${i} got ${y.view[i]}, want ${want[i]}, canary ${y.intact()}`)
          }
        }
      }
    }
    t.equal(bad, 0)
  })

  t.test(`binary_f32 ${isa} works in place (y aliasing a dense operand)`, async (t) => {
    for (const n of [1, 9, 67]) {
      const a = special(n, n)
      const b = special(n, n + 1)
      const want = new Float32Array(n)
      xf.xfBinary('ref', B.mul, a, 1, b, 1, want, n)
      const y = Guarded.of(a)
      xf.xfBinary(isa, B.mul, y.view, 1, b, 1, y.view, n)
      t.equal(firstBitDiff(y.view, want), -1, `n=${n}`)
    }
  })

  t.test(`unary_f32 and clip ${isa}: exact functions equal ref bit for bit`, async (t) => {
    const exactOps = [U.relu, U.leakyRelu, U.sqrt, U.abs, ...Array.from({ length: 40 }, (_, i) => i)]
    const approx = new Set([U.sigmoid, U.tanh, U.exp, U.erf, U.hardSigmoid, U.hardSwish, U.gelu, U.geluTanh, 39])
    let bad = 0
    for (const op of exactOps.filter((o) => !approx.has(o))) {
      for (const n of lengths) {
        const x = Guarded.of(special(n, n * 7 + op, 3))
        const want = new Float32Array(n)
        xf.xfUnary('ref', op, x.view, want, n, 0.1, 0.4)
        const y = new Guarded(n, 5)
        xf.xfUnary(isa, op, x.view, y.view, n, 0.1, 0.4)
        const i = firstBitDiff(y.view, want)
        if ((i >= 0 || !y.intact()) && bad++ < 10) t.fail(`op=${op} n=${n}: element ${i} got ${y.view[i]}, want ${want[i]}`)
      }
    }
    for (const [lo, hi] of [[-1, 1], [0, 6], [2, -2], [-Infinity, 0.5], [NaN, 1]] as const) {
      for (const n of lengths) {
        const x = Guarded.of(special(n, n * 11, 3))
        const want = new Float32Array(n)
        xf.xfClip('ref', x.view, want, n, lo, hi)
        const y = new Guarded(n, 5)
        xf.xfClip(isa, x.view, y.view, n, lo, hi)
        const i = firstBitDiff(y.view, want)
        if ((i >= 0 || !y.intact()) && bad++ < 10) t.fail(`clip [${lo}, ${hi}] n=${n}: element ${i} got ${y.view[i]}, want ${want[i]}`)
      }
    }
    t.equal(bad, 0)
  })
}

// ---- accuracy of the vector math against float64 ------------------------------------------------------

/** erf in float64: Maclaurin series below 2.5, continued fraction for erfc above (both < 1e-14). */
function erf64(x: number): number {
  const a = Math.abs(x)
  if (a < 2.5) {
    let term = a
    let sum = a
    for (let n = 1; n < 100; n++) {
      term *= (-a * a) / n
      const add = term / (2 * n + 1)
      sum += add
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break
    }
    return Math.sign(x) * sum * (2 / Math.sqrt(Math.PI))
  }
  return Math.sign(x) * (1 - erfc64(a))
}

/** erfc(a) for a >= 2.5 by Lentz's continued fraction; below, 1 - erf. */
function erfc64(a: number): number {
  if (a < 2.5) return 1 - erf64(a)
  let f = a
  let c = a
  let d = 0
  for (let n = 1; n < 300; n++) {
    const an = n / 2
    d = a + an * d
    d = 1 / d
    c = a + an / c
    const delta = c * d
    f *= delta
    if (Math.abs(delta - 1) < 1e-16) break
  }
  return Math.exp(-a * a) / (f * Math.sqrt(Math.PI))
}

const gelu64 = (x: number): number => (x >= 0 ? 0.5 * x * (1 + erf64(x / Math.SQRT2)) : 0.5 * x * erfc64(-x / Math.SQRT2))
const geluTanh64 = (x: number): number => x / (1 + Math.exp(-2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)))

interface Accuracy {
  op: number
  name: string
  lo: number
  hi: number
  truth: (x: number) => number
  /** Allowed |got - truth| for an input x and truth w (eltwise.h "Vector math" bounds, rounded up). */
  bound: (x: number, w: number) => number
}

const tiny = 2 ** -126
const uOf = (x: number): number => Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)
const accuracy: Accuracy[] = [
  { op: U.exp, name: 'exp', lo: -104, hi: 89, truth: Math.exp, bound: (_, w) => (w >= tiny ? 8.6e-8 * w : 1.2e-45) },
  { op: U.erf, name: 'erf', lo: -5, hi: 5, truth: erf64, bound: (_, w) => 1.8e-7 * Math.abs(w) + 1e-45 },
  { op: U.tanh, name: 'tanh', lo: -12, hi: 12, truth: Math.tanh, bound: (_, w) => 1.5e-7 * Math.abs(w) + 1e-45 },
  { op: U.sigmoid, name: 'sigmoid', lo: -100, hi: 40, truth: (x) => 1 / (1 + Math.exp(-x)), bound: (x, w) => (x >= -87 ? 2.1e-7 * w : 1.2e-44) },
  { op: U.swish, name: 'swish', lo: -100, hi: 40, truth: (x) => x / (1 + Math.exp(-x)), bound: (x, w) => (x >= -87 ? 2.8e-7 * Math.abs(w) + 1e-45 : 1.2e-44 * Math.abs(x)) },
  // gelu and gelu_tanh: the rounding of x/sqrt2 (of u) grows into the result as x^2 (as |u|) on the negative side
  { op: U.gelu, name: 'gelu', lo: -12, hi: 12, truth: gelu64, bound: (x, w) => (x >= -5.5 ? (8e-7 + 1e-7 * x * x) * Math.abs(w) + 1e-45 : 8.3e-8) },
  { op: U.geluTanh, name: 'gelu_tanh', lo: -12, hi: 12, truth: geluTanh64, bound: (x, w) => (x >= -9 ? (4e-7 + 3.5e-7 * Math.abs(uOf(x))) * Math.abs(w) + 1e-45 : 1e-27) },
]

for (const isa of isas) {
  if (isa === 'ref') continue
  t.test(`vector math ${isa} is within the stated error of float64`, async (t) => {
    for (const a of accuracy) {
      const n = 20011
      const x = random(n, a.op, a.lo, a.hi)
      x.set([0, -0, a.lo, a.hi, 0.9, -0.9, 0.6, -0.6, 3.92, -3.92, 1e-30, -1e-30], 0)
      const y = new Float32Array(n)
      xf.xfUnary(isa, a.op, x, y, n, 0, 0)
      let worst = 0
      let at = 0
      for (let i = 0; i < n; i++) {
        const w = a.truth(x[i]!)
        const r = y[i] === Math.fround(w) ? 0 : Math.abs(y[i]! - w) / a.bound(x[i]!, w)
        if (!(r <= worst)) (worst = r), (at = i)
      }
      t.ok(worst <= 1, `${a.name}: worst |err|/bound ${worst.toFixed(3)} at x=${x[at]} (got ${y[at]}, want ${a.truth(x[at]!)})`)
      const specials = new Float32Array([NaN, Infinity, -Infinity])
      const ys = new Float32Array(3)
      const yr = new Float32Array(3)
      xf.xfUnary(isa, a.op, specials, ys, 3, 0, 0)
      xf.xfUnary('ref', a.op, specials, yr, 3, 0, 0)
      t.same(Array.from(ys), Array.from(yr), `${a.name}: NaN and infinities as the ref`)
    }
  })

  t.test(`unary_f32 ${isa}: approximate functions are near ref at every length`, async (t) => {
    let bad = 0
    for (const a of [...accuracy, { op: U.hardSigmoid, name: 'hard_sigmoid', lo: -6, hi: 6 }, { op: U.hardSwish, name: 'hard_swish', lo: -6, hi: 6 }]) {
      for (const n of lengths) {
        const x = Guarded.of(random(n, n * 13 + a.op, a.lo, a.hi))
        const want = new Float32Array(n)
        xf.xfUnary('ref', a.op, x.view, want, n, 0.2, 0.5)
        const y = new Guarded(n, 5)
        xf.xfUnary(isa, a.op, x.view, y.view, n, 0.2, 0.5)
        for (let i = 0; i < n; i++) {
          // the stated error, the ref's own (1 ulp, and the cancellation in 1 + erf / 1 + tanh for x < 0)
          // the stated error (gelu's negative tail as bounded above), the ref's own 1 ulp, its cancellation in
          // 1 + erf and 1 + tanh for x < 0, and subnormal results
          const xi = x.view[i]!
          const rel = a.op === U.gelu ? 8e-7 + 1e-7 * xi * xi : a.op === U.geluTanh ? 4e-7 + 3.5e-7 * Math.abs(uOf(xi)) : 4.1e-7
          const tol = rel * Math.abs(want[i]!) + 2 ** -23 * Math.max(1, Math.abs(xi)) * (a.op === U.exp ? 0 : 1) + 2.5e-44
          const same = y.view[i] === want[i]
          if ((!(same || Math.abs(y.view[i]! - want[i]!) <= tol) || !y.intact()) && bad++ < 10) {
            t.fail(`${a.name} n=${n} i=${i}: x=${x.view[i]} got ${y.view[i]}, ref ${want[i]}, canary ${y.intact()}`)
          }
        }
      }
    }
    t.equal(bad, 0)
  })
}
