// SPDX-License-Identifier: Apache-2.0
// The nn native ops against naive JavaScript references (conv and its adjoint over groups, strides,
// dilations and pads; batched MatMul broadcasting; Gemm transposes), their argument checks, and the
// TypeScript shape functions on symbolic dims.
import t from 'tap'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { nnOps } from '../../lib/model/ops/nn.js'
import type { OpDef } from '../../lib/model/ops/op-def.js'
import type { AttrValue, Dim, ValueInfo } from '../../lib/model/ir.js'
import { convShape } from '../../lib/model/ops/nn-conv.js'
import type { Window } from '../../lib/model/ops/nn-spatial.js'
import { convTransposeWorkspaceBytes } from '../../lib/model/ops/conv-cost.js'

const b = binding()
const F32 = 1
const I64 = 7
const U8 = 2

const count = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1)

function f32(dims: number[], data: Float32Array = new Float32Array(count(dims))): NativeTensor {
  return { dtype: F32, dims, data }
}

/** A seeded sequence of floats in [-1, 1) (xorshift), so failures reproduce. */
function floats(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    out[i] = ((s >>> 0) % 2000) / 1000 - 1
  }
  return out
}

function maxDiff(a: ArrayLike<number>, want: ArrayLike<number>): number {
  let m = 0
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs((a[i] ?? NaN) - (want[i] ?? NaN)))
  return Number.isNaN(m) ? Infinity : m
}

interface ConvCase {
  n: number
  c: number
  m: number
  group: number
  inp: number[]
  k: number[]
  s: number[]
  d: number[]
  pb: number[]
  pe: number[]
}

/** Row-major offset of coord in dims. */
function offset(dims: readonly number[], coord: readonly number[]): number {
  return coord.reduce((o, x, i) => o * (dims[i] ?? 1) + x, 0)
}

/** Every coordinate of dims in row-major order. */
function* coords(dims: readonly number[]): Generator<number[]> {
  const n = count(dims)
  for (let i = 0; i < n; i++) {
    const c: number[] = []
    let r = i
    for (let a = dims.length - 1; a >= 0; a--) {
      c.unshift(r % dims[a]!)
      r = Math.floor(r / dims[a]!)
    }
    yield c
  }
}

function convRef(p: ConvCase, x: Float32Array, w: Float32Array, bias: Float32Array, out: number[]): Float32Array {
  const cg = p.c / p.group
  const mg = p.m / p.group
  const y = new Float32Array(p.n * p.m * count(out))
  for (let n = 0; n < p.n; n++)
    for (let oc = 0; oc < p.m; oc++)
      for (const o of coords(out)) {
        let acc = bias[oc]!
        const g = Math.floor(oc / mg)
        for (let ic = 0; ic < cg; ic++)
          for (const k of coords(p.k)) {
            const i = o.map((v, a) => v * p.s[a]! - p.pb[a]! + k[a]! * p.d[a]!)
            if (i.some((v, a) => v < 0 || v >= p.inp[a]!)) continue
            acc += x[offset([p.n, p.c, ...p.inp], [n, g * cg + ic, ...i])]! * w[offset([p.m, cg, ...p.k], [oc, ic, ...k])]!
          }
        y[offset([p.n, p.m, ...out], [n, oc, ...o])] = acc
      }
  return y
}

function convTransposeRef(p: ConvCase, x: Float32Array, w: Float32Array, out: number[]): Float32Array {
  const cg = p.c / p.group
  const mg = p.m / p.group
  const y = new Float32Array(p.n * p.m * count(out))
  for (let n = 0; n < p.n; n++)
    for (let ic = 0; ic < p.c; ic++)
      for (const i of coords(p.inp)) {
        const g = Math.floor(ic / cg)
        for (let ocg = 0; ocg < mg; ocg++)
          for (const k of coords(p.k)) {
            const o = i.map((v, a) => v * p.s[a]! - p.pb[a]! + k[a]! * p.d[a]!)
            if (o.some((v, a) => v < 0 || v >= out[a]!)) continue
            y[offset([p.n, p.m, ...out], [n, g * mg + ocg, ...o])]! +=
              x[offset([p.n, p.c, ...p.inp], [n, ic, ...i])]! * w[offset([p.c, mg, ...p.k], [ic, ocg, ...k])]!
          }
      }
  return y
}

const convCases: ConvCase[] = [
  { n: 1, c: 3, m: 5, group: 1, inp: [7, 6], k: [3, 3], s: [1, 1], d: [1, 1], pb: [1, 1], pe: [1, 1] },
  { n: 2, c: 4, m: 6, group: 2, inp: [9, 8], k: [3, 2], s: [2, 3], d: [1, 2], pb: [1, 0], pe: [2, 1] },
  { n: 1, c: 6, m: 6, group: 6, inp: [11, 10], k: [3, 3], s: [2, 2], d: [1, 1], pb: [1, 1], pe: [1, 1] },
  { n: 1, c: 2, m: 9, group: 1, inp: [13], k: [4], s: [3], d: [2], pb: [2], pe: [0] },
  { n: 1, c: 2, m: 3, group: 1, inp: [4, 5, 6], k: [2, 3, 2], s: [1, 2, 1], d: [2, 1, 1], pb: [1, 1, 0], pe: [0, 1, 1] },
  { n: 1, c: 8, m: 12, group: 2, inp: [5, 33], k: [1, 1], s: [1, 1], d: [1, 1], pb: [0, 0], pe: [0, 0] },
  // Kernel == stride (PP-OCR det's upsampling): ConvTranspose's taps are disjoint and cover the
  // output, uncropped (case 6), and cropped by pads (case 8); case 7 leaves outputs no tap reaches.
  { n: 2, c: 5, m: 6, group: 1, inp: [6, 7], k: [2, 2], s: [2, 2], d: [1, 1], pb: [0, 0], pe: [0, 0] },
  { n: 1, c: 4, m: 4, group: 2, inp: [5, 9], k: [2, 3], s: [2, 3], d: [1, 1], pb: [1, 0], pe: [0, 2] },
  { n: 1, c: 3, m: 2, group: 1, inp: [5, 4], k: [2, 2], s: [2, 2], d: [1, 1], pb: [1, 1], pe: [1, 0] },
]

t.test('Conv matches a naive reference over groups, strides, dilations and asymmetric pads', async (t) => {
  convCases.forEach((p, ci) => {
    const out = p.inp.map((len, a) => Math.floor((len + p.pb[a]! + p.pe[a]! - ((p.k[a]! - 1) * p.d[a]! + 1)) / p.s[a]!) + 1)
    const x = floats(p.n * p.c * count(p.inp), 1 + ci)
    const w = floats(p.m * (p.c / p.group) * count(p.k), 100 + ci)
    const bias = floats(p.m, 200 + ci)
    const want = convRef(p, x, w, bias, out)
    const ints = [p.group, p.k.length, ...p.k, ...p.s, ...p.d, ...p.pb, ...p.pe]
    for (const threads of [1, 3]) {
      const y = f32([p.n, p.m, ...out])
      const inputs = [f32([p.n, p.c, ...p.inp], x), f32([p.m, p.c / p.group, ...p.k], w), f32([p.m], bias)]
      b.runOp('Conv', inputs, [y], ints, [], threads)
      t.ok(maxDiff(y.data as Float32Array, want) < 1e-4, `case ${ci} (${JSON.stringify(p)}) threads=${threads}`)
    }
  })
})

t.test('ConvTranspose matches the adjoint scatter, including outputs cropped or padded by the plan', async (t) => {
  convCases.forEach((p, ci) => {
    const full = p.inp.map((len, a) => (len - 1) * p.s[a]! + (p.k[a]! - 1) * p.d[a]! + 1)
    const out = full.map((len, a) => len - p.pb[a]! - p.pe[a]! + (ci % 2))
    const x = floats(p.n * p.c * count(p.inp), 300 + ci)
    const w = floats(p.c * (p.m / p.group) * count(p.k), 400 + ci)
    const want = convTransposeRef(p, x, w, out)
    const y = f32([p.n, p.m, ...out])
    const inputs = [f32([p.n, p.c, ...p.inp], x), f32([p.c, p.m / p.group, ...p.k], w), null]
    const ints = [p.group, p.k.length, ...p.k, ...p.s, ...p.d, ...p.pb]
    b.runOp('ConvTranspose', inputs, [y], ints, [], 2)
    t.ok(maxDiff(y.data as Float32Array, want) < 1e-4, `case ${ci} (${JSON.stringify(p)})`)
    // The GEMM algorithm (algo 1) over 1, 2 and one-per-row bands, with the bias, on 1 and 2 threads,
    // in the workspace lib/model/ops/conv-cost.ts sizes; the bytes after it must stay untouched.
    const bias = floats(p.m, 500 + ci)
    const withBias = want.map((v, i) => v + bias[Math.floor(i / count(out)) % p.m]!)
    const s = convShape([p.n, p.c, ...p.inp], p.m, p.group, { kernel: p.k, strides: p.s, dilations: p.d } as unknown as Window, out, p.pb)
    for (const slices of [1, 2, 1000]) {
      for (const threads of [1, 2]) {
        const bytes = convTransposeWorkspaceBytes(s, slices, threads)
        const ws = new Uint8Array(bytes + 64).fill(0xa5)
        const yg = f32([p.n, p.m, ...out], new Float32Array(count([p.n, p.m, ...out])).fill(NaN))
        const ins = [inputs[0]!, inputs[1]!, f32([p.m], bias)]
        b.runOp('ConvTranspose', ins, [yg, { dtype: U8, dims: [bytes], data: ws.subarray(0, bytes) }], [...ints, 1, slices], [], threads)
        const what = `gemm case ${ci} slices=${slices} threads=${threads}`
        t.ok(maxDiff(yg.data as Float32Array, withBias) < 1e-4, what)
        t.ok(ws.subarray(bytes).every((v) => v === 0xa5), `${what}: nothing written past the workspace`)
      }
    }
    t.throws(() => b.runOp('ConvTranspose', inputs, [f32([p.n, p.m, ...out]), { dtype: U8, dims: [16], data: new Uint8Array(16) }], [...ints, 1, 1], [], 1),
      /failed to run ConvTranspose: the workspace/, `case ${ci}: a workspace too small is an error`)
  })
  t.throws(() => b.runOp('ConvTranspose', [f32([1, 1, 3]), f32([1, 1, 2]), null], [f32([1, 1, 4])], [1, 1, 2, 1, 1, 0, 7, 1], []), /bad algorithm attributes/)
})

t.test('Conv rejects output dims that disagree with its attributes', async (t) => {
  const x = f32([1, 1, 5, 5])
  const w = f32([1, 1, 3, 3])
  t.throws(() => b.runOp('Conv', [x, w, null], [f32([1, 1, 4, 4])], [1, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0], []), /failed to run Conv/)
  t.throws(() => b.runOp('Conv', [x, f32([1, 2, 3, 3]), null], [f32([1, 1, 3, 3])], [1, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0], []), /failed to run Conv/)
})

/** numpy matmul of row-major a [..., M, K] and b [..., K, N] (ranks >= 2) into out dims. */
function matmulRef(a: Float32Array, ad: number[], bv: Float32Array, bd: number[], od: number[]): Float32Array {
  const m = ad[ad.length - 2]!
  const k = ad[ad.length - 1]!
  const n = bd[bd.length - 1]!
  const batch = od.slice(0, -2)
  const y = new Float32Array(count(od))
  const pick = (dims: number[], c: number[]): number[] => dims.slice(0, -2).map((d, i) => (d === 1 ? 0 : c[c.length - (dims.length - 2) + i]!))
  for (const c of coords(batch)) {
    const ao = offset(ad.slice(0, -2), pick(ad, c)) * m * k
    const bo = offset(bd.slice(0, -2), pick(bd, c)) * k * n
    const yo = offset(batch, c) * m * n
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let s = 0
        for (let p = 0; p < k; p++) s += a[ao + i * k + p]! * bv[bo + p * n + j]!
        y[yo + i * n + j] = s
      }
  }
  return y
}

t.test('MatMul broadcasts batch dims and handles 1-D operands like numpy', async (t) => {
  const cases: Array<[number[], number[], number[], number[], number[]]> = [
    // a dims, b dims, out dims, a dims as 2-D+, b dims as 2-D+
    [[5, 7], [7, 9], [5, 9], [5, 7], [7, 9]],
    [[2, 1, 5, 3], [4, 3, 6], [2, 4, 5, 6], [2, 1, 5, 3], [4, 3, 6]],
    [[3, 6, 4], [4, 2], [3, 6, 2], [3, 6, 4], [4, 2]],
    [[4], [2, 4, 3], [2, 3], [1, 4], [2, 4, 3]],
    [[2, 5, 4], [4], [2, 5], [2, 5, 4], [4, 1]],
    [[4], [4], [], [1, 4], [4, 1]],
  ]
  cases.forEach(([ad, bd, od, ad2, bd2], ci) => {
    const a = floats(count(ad), 10 + ci)
    const bv = floats(count(bd), 20 + ci)
    const rank = Math.max(ad2.length, bd2.length)
    const full = [...new Array<number>(rank - 2).fill(1).map((_, i) => {
      const x = ad2[ad2.length - rank + i] ?? 1
      const y = bd2[bd2.length - rank + i] ?? 1
      return Math.max(x, y)
    }), ad2[ad2.length - 2]!, bd2[bd2.length - 1]!]
    const want = matmulRef(a, ad2, bv, bd2, full)
    for (const threads of [1, 4]) {
      const y = f32(od)
      b.runOp('MatMul', [f32(ad, a), f32(bd, bv)], [y], [], [], threads)
      t.ok(maxDiff(y.data as Float32Array, want) < 1e-4, `case ${ci} a=[${ad}] b=[${bd}] threads=${threads}`)
    }
  })
  t.throws(() => b.runOp('MatMul', [f32([2, 3]), f32([4, 2])], [f32([2, 2])], [], []), /failed to run MatMul/)
})

t.test('Gemm applies transA, transB, alpha, beta and a broadcast C', async (t) => {
  const m = 6
  const k = 11
  const n = 9
  for (const [ta, tb] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) {
    for (const cdims of [[], [n], [1, n], [m, 1], [m, n]]) {
      const a = floats(m * k, 7)
      const bv = floats(k * n, 8)
      const c = floats(count(cdims), 9)
      const y = f32([m, n])
      const ad = ta ? [k, m] : [m, k]
      const bd = tb ? [n, k] : [k, n]
      b.runOp('Gemm', [f32(ad, a), f32(bd, bv), f32(cdims, c)], [y], [ta, tb], [0.5, 2], 2)
      const want = new Float32Array(m * n)
      for (let i = 0; i < m; i++)
        for (let j = 0; j < n; j++) {
          let s = 0
          for (let p = 0; p < k; p++) s += a[ta ? p * m + i : i * k + p]! * bv[tb ? j * k + p : p * n + j]!
          const ci = cdims.length === 0 ? 0 : cdims.length === 1 ? j : (cdims[0] === 1 ? 0 : i) * cdims[1]! + (cdims[1] === 1 ? 0 : j)
          want[i * n + j] = 0.5 * s + 2 * c[ci]!
        }
      t.ok(maxDiff(y.data as Float32Array, want) < 1e-4, `transA=${ta} transB=${tb} C=[${cdims}]`)
    }
  }
})

t.test('MaxPool writes first-max indices in both storage orders', async (t) => {
  const x = new Float32Array([1, 5, 2, 5, 3, 0, 9, 9, 4, 4, 8, 7])
  const ints = [2, 2, 2, 1, 2, 1, 1, 0, 0, 0, 0] // kernel 2x2, strides 1x2
  for (const order of [0, 1]) {
    const y = f32([1, 1, 2, 2])
    const idx = { dtype: I64, dims: [1, 1, 2, 2], data: new BigInt64Array(4) }
    b.runOp('MaxPool', [f32([1, 1, 3, 4], x)], [y, idx], [...ints, order], [])
    t.same(Array.from(y.data as Float32Array), [5, 9, 4, 9])
    const rowMajor = [1, 6, 8, 6]
    const colMajor = rowMajor.map((i) => (i % 4) * 3 + Math.floor(i / 4))
    t.same(Array.from(idx.data, Number), order === 0 ? rowMajor : colMajor, `storage_order=${order}`)
  }
})

t.test('Resize refuses more tap combinations than its fixed table holds', async (t) => {
  const dims = [2, 2, 2, 2, 2, 2, 2]
  const floatsAttr = [-0.75, 0, ...dims.flatMap(() => [2, 4, 0, 1])]
  const x = f32(dims)
  const y = f32(dims.map((d) => d * 2))
  t.throws(() => b.runOp('Resize', [x], [y], [dims.length, 2, 0, 0, 0], floatsAttr), /tap combinations/)
  b.runOp('Resize', [x], [y], [dims.length, 0, 0, 0, 0], floatsAttr)
  t.pass('nearest needs one tap per axis')
})

function def(opType: string): OpDef {
  const d = nnOps.find((o) => o.opType === opType)
  if (d === undefined) throw new Error(`no ${opType}`)
  return d
}

function infer(opType: string, inputs: Array<ValueInfo | undefined>, attrs: Record<string, AttrValue> = {}, opset = 17): Dim[][] {
  const node = { name: 'n', opType, domain: '', inputs: inputs.map((_, i) => `i${i}`), outputs: ['y'], attrs: new Map(Object.entries(attrs)) }
  return def(opType).infer({ node, opset, inputs }).outputs.map((o) => o.dims.slice())
}

t.test('nn shape functions keep symbolic dims symbolic', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: ['batch', 3, 'H', 'W'] }
  const w: ValueInfo = { dtype: 'float32', dims: [16, 3, 3, 3] }
  const padded = infer('Conv', [x, w], { pads: [1, 1, 1, 1] })[0]!
  t.same(padded.slice(0, 2), ['batch', 16])
  t.ok(padded.slice(2).every((d) => typeof d === 'string'), `symbolic spatial dims ${padded}`)
  const same = infer('Conv', [x, w], { auto_pad: 'SAME_UPPER', strides: [2, 2] })[0]!
  t.same(same, ['batch', 16, 'ceil(H/2)', 'ceil(W/2)'])
  const concrete = infer('Conv', [{ dtype: 'float32', dims: [1, 3, 640, 640] }, w], { pads: [1, 1, 1, 1], strides: [2, 2] })[0]
  t.same(concrete, [1, 16, 320, 320])
  t.same(infer('MatMul', [{ dtype: 'float32', dims: ['b', 1, 'S', 64] }, { dtype: 'float32', dims: [12, 64, 'S'] }])[0], ['b', 12, 'S', 'S'])
  const sizes: ValueInfo = { dtype: 'int64', dims: [4], values: [1, 3, 64, 48] }
  t.same(infer('Resize', [x, undefined, undefined, sizes], { mode: 'linear' })[0], [1, 3, 64, 48])
  const scales: ValueInfo = { dtype: 'float32', dims: [4], values: [1, 1, 2, 2] }
  t.same(infer('Resize', [{ dtype: 'float32', dims: [1, 8, 10, 'W'] }, undefined, scales])[0], [1, 8, 20, 'floor(W*2)'])
  t.same(infer('ConvTranspose', [{ dtype: 'float32', dims: [1, 4, 'H', 5] }, { dtype: 'float32', dims: [4, 2, 2, 2] }], { strides: [2, 2] })[0], [1, 2, '((H-1)*2)+2', 10])
})
