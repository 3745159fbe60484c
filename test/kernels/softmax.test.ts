// SPDX-License-Identifier: Apache-2.0
// Softmax (kernels/softmax/softmax.h) on every ISA against float64 and against ref: lengths 1..67 and
// longer, stride 1 (the SIMD path) and 3 (the ref fallback), moderate, huge-offset and -inf inputs,
// a NaN input (all NaN, as ref), all -inf (NaN, as ref); input and output misaligned by 4 bytes, a
// canary after the output. Then the Softmax op through the table on a [2, 3, 50] tensor per axis.
//
// Tolerance: |y - exact| <= y_exact * (2^-22 + (n/16 + 8) * 2^-24) + 2^-40: the vector exp (< 2^-23),
// the float sum of n terms in 16 or 32 lanes, the reciprocal and the final product.
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { Guarded, isas, lengths, random, simdIsas, xf } from '../helpers/xf.js'

function exact(x: Float32Array, n: number, stride: number): Float64Array {
  let m = -Infinity
  for (let i = 0; i < n; i++) m = Math.max(m, x[i * stride]!)
  const e = new Float64Array(n)
  let s = 0
  for (let i = 0; i < n; i++) s += e[i] = Math.exp(x[i * stride]! - m)
  for (let i = 0; i < n; i++) e[i]! /= s
  return e
}

const inputs: Array<[string, (n: number, seed: number) => Float32Array]> = [
  ['uniform [-10, 10]', (n, s) => random(n, s, -10, 10)],
  ['offset 1000', (n, s) => random(n, s, 1000, 1010)],
  ['with -inf', (n, s) => {
    const a = random(n, s, -5, 5)
    for (let i = 1; i < n; i += 4) a[i] = -Infinity
    return a
  }],
]

for (const isa of isas) {
  t.test(`softmax_f32 ${isa} matches float64`, async (t) => {
    let bad = 0
    for (const [name, gen] of inputs) {
      for (const n of lengths) {
        for (const stride of [1, 3]) {
          const x = Guarded.of(gen(n * stride, n * 7 + stride))
          const y = new Guarded(n * stride, 9)
          xf.xfSoftmax(isa, x.view, y.view, n, stride)
          const want = exact(x.view, n, stride)
          const tol = 2 ** -22 + (n / 16 + 8) * 2 ** -24
          for (let i = 0; i < n * stride; i++) {
            const g = y.view[i]!
            const ok = i % stride ? g === 9 : Math.abs(g - want[i / stride]!) <= want[i / stride]! * tol + 2 ** -40
            if ((!ok || !y.intact()) && bad++ < 10) t.fail(`${name} n=${n} stride=${stride} i=${i}: got ${g}, want ${want[i / stride]}, canary ${y.intact()}`)
          }
        }
      }
    }
    t.equal(bad, 0)
  })
}

for (const isa of simdIsas) {
  t.test(`softmax_f32 ${isa} handles NaN and all -inf as ref does`, async (t) => {
    for (const n of [1, 5, 8, 9, 33]) {
      const cases: Array<[string, Float32Array]> = [
        ['one NaN', random(n, n).map((v, i) => (i === n >> 1 ? NaN : v))],
        ['all -inf', new Float32Array(n).fill(-Infinity)],
        ['+inf', random(n, n).map((v, i) => (i === 0 ? Infinity : v))],
      ]
      for (const [name, x] of cases) {
        const want = new Float32Array(n)
        const got = new Float32Array(n)
        xf.xfSoftmax('ref', x, want, n, 1)
        xf.xfSoftmax(isa, x, got, n, 1)
        t.same(Array.from(got, (v) => (Number.isNaN(v) ? 'NaN' : v)), Array.from(want, (v) => (Number.isNaN(v) ? 'NaN' : v)), `${name} n=${n}`)
      }
    }
  })
}

t.test('the Softmax op runs the table kernel on every axis', async (t) => {
  const native = binding()
  const dims = [2, 3, 50]
  const x = random(300, 42, -4, 4)
  for (const axis of [0, 1, 2]) {
    const y = new Float32Array(300)
    native.runOp('Softmax', [{ dtype: 1, dims, data: x }], [{ dtype: 1, dims, data: y }], [axis, 0], [], 2)
    const inner = dims.slice(axis + 1).reduce((p, d) => p * d, 1)
    const n = dims[axis]!
    let worst = 0
    for (let o = 0; o < 300 / (n * inner); o++) {
      for (let c = 0; c < inner; c++) {
        const base = o * n * inner + c
        const want = exact(x.subarray(base), n, inner)
        for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(y[base + i * inner]! - want[i]!) / want[i]!)
      }
    }
    t.ok(worst <= 2 ** -22 + (50 / 16 + 8) * 2 ** -24, `axis ${axis}: worst relative error ${worst}`)
  }
})
