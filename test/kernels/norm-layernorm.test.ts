// SPDX-License-Identifier: Apache-2.0
// LayerNormalization rows (kernels/norm/norm.h, layernorm_row_f32) on every ISA against float64 and
// against ref: n = 1..67 and model widths (384, 768, 1000, 1031), Scale and B per element or
// broadcast (1 value), B absent, centred data, a large common offset (mean 1000, std 1) and a tiny
// spread (std 1e-3); the Mean and InvStdDev outputs; x, w, b and y misaligned by 4 bytes and a
// canary after y. Then the LayerNormalization op through the table.
//
// Tolerance (norm.h): |y - exact| <= 2^-24 * (|w| inv (|x - mean| (n/64 + 8) + 2 |mean|) + 2 |b|) + 2^-40
// (mean rounded to float, centered float variance over 16/32 lanes, the products and the sum);
// mean within 2^-23 |mean| + 2^-40, inv_std within 2^-24 (n/64 + 8) inv_std.
import t from 'tap'
import { binding } from '../../lib/native/binding.js'
import { Guarded, isas, lengths, random, simdIsas, xf } from '../helpers/xf.js'

interface Case {
  n: number
  wn: number
  bn: number // 0: no B
  data: 'centred' | 'offset' | 'narrow'
}

function data(c: Case, seed: number): Float32Array {
  if (c.data === 'offset') return random(c.n, seed, 999, 1001)
  if (c.data === 'narrow') return random(c.n, seed, 0.5 - 1e-3, 0.5 + 1e-3)
  return random(c.n, seed, -3, 3)
}

function exact(x: Float32Array, w: Float32Array, b: Float32Array | null, eps: number) {
  const n = x.length
  let s = 0
  for (let i = 0; i < n; i++) s += x[i]!
  const mean = s / n
  let q = 0
  for (let i = 0; i < n; i++) q += (x[i]! - mean) ** 2
  const inv = 1 / Math.sqrt(q / n + eps)
  const y = new Float64Array(n)
  for (let i = 0; i < n; i++) y[i] = (x[i]! - mean) * inv * w[w.length === 1 ? 0 : i]! + (b ? b[b.length === 1 ? 0 : i]! : 0)
  return { y, mean, inv }
}

function cases(): Case[] {
  const out: Case[] = []
  for (const n of [...lengths, 384, 768]) {
    out.push({ n, wn: n, bn: n, data: 'centred' })
    if (n % 3 === 0) out.push({ n, wn: 1, bn: 1, data: 'offset' }, { n, wn: n, bn: 0, data: 'narrow' })
  }
  return out
}

const eps = 1e-5

for (const isa of isas) {
  t.test(`layernorm_row_f32 ${isa} matches float64`, async (t) => {
    let bad = 0
    cases().forEach((c, k) => {
      const x = Guarded.of(data(c, k))
      const w = Guarded.of(random(c.wn, k + 1, -2, 2))
      const b = c.bn ? Guarded.of(random(c.bn, k + 2)) : null
      const y = new Guarded(c.n, 9)
      const [mean, inv] = xf.xfLayerNormRow(isa, x.view, y.view, w.view, b ? b.view : null, eps)
      const want = exact(x.view, w.view, b?.view ?? null, eps)
      const fail = (what: string): void => {
        if (bad++ < 10) t.fail(`n=${c.n} w_n=${c.wn} b_n=${c.bn} data=${c.data}: ${what}`)
      }
      if (!y.intact()) fail('canary overwritten')
      if (!(Math.abs(mean - want.mean) <= 2 ** -23 * Math.abs(want.mean) + 2 ** -40)) fail(`mean ${mean}, want ${want.mean}`)
      if (!(Math.abs(inv - want.inv) <= 2 ** -24 * (c.n / 64 + 8) * want.inv)) fail(`inv_std ${inv}, want ${want.inv}`)
      for (let i = 0; i < c.n; i++) {
        const wi = Math.abs(w.view[c.wn === 1 ? 0 : i]!)
        const bi = b ? Math.abs(b.view[c.bn === 1 ? 0 : i]!) : 0
        const tol = 2 ** -24 * (wi * want.inv * (Math.abs(x.view[i]! - want.mean) * (c.n / 64 + 8) + 2 * Math.abs(want.mean)) + 2 * bi) + 2 ** -40
        if (!(Math.abs(y.view[i]! - want.y[i]!) <= tol)) {
          fail(`i=${i}: got ${y.view[i]}, want ${want.y[i]} (tol ${tol})`)
          break
        }
      }
    })
    t.equal(bad, 0)
  })
}

for (const isa of simdIsas) {
  t.test(`layernorm_row_f32 ${isa} gives the ref's mean for constant rows and in place`, async (t) => {
    for (const n of [1, 7, 8, 33]) {
      const x = new Float32Array(n).fill(2.5)
      const y = new Float32Array(n)
      const w = new Float32Array([1])
      t.same(xf.xfLayerNormRow(isa, x, y, w, null, eps), xf.xfLayerNormRow('ref', x, new Float32Array(n), w, null, eps), `n=${n}`)
      t.ok(y.every((v) => v === 0), `n=${n}: a constant row normalizes to 0`)
      const z = random(n, n, -1, 1)
      const want = new Float32Array(n)
      xf.xfLayerNormRow(isa, z, want, w, null, eps)
      xf.xfLayerNormRow(isa, z, z, w, null, eps)
      t.same(Array.from(z), Array.from(want), `n=${n}: in place equals out of place`)
    }
  })
}

t.test('the LayerNormalization op runs the table kernel with Mean and InvStdDev', async (t) => {
  const native = binding()
  const x = random(3 * 768, 5, -2, 2)
  const w = random(768, 6)
  const b = random(768, 7)
  const y = new Float32Array(3 * 768)
  const m = new Float32Array(3)
  const s = new Float32Array(3)
  const f32 = (dims: number[], data: Float32Array) => ({ dtype: 1, dims, data })
  native.runOp('LayerNormalization', [f32([3, 768], x), f32([768], w), f32([768], b)], [f32([3, 768], y), f32([3, 1], m), f32([3, 1], s)], [1], [eps], 2)
  for (let r = 0; r < 3; r++) {
    const want = exact(x.subarray(r * 768, (r + 1) * 768), w, b, eps)
    let worst = 0
    for (let i = 0; i < 768; i++) worst = Math.max(worst, Math.abs(y[r * 768 + i]! - want.y[i]!))
    t.ok(worst < 1e-5, `row ${r}: max |y - exact| ${worst}`)
    t.ok(Math.abs(m[r]! - want.mean) < 1e-6 && Math.abs(s[r]! - want.inv) < 1e-5 * want.inv, `row ${r}: mean and inv_std`)
  }
})
