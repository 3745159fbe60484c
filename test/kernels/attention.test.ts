// SPDX-License-Identifier: Apache-2.0
// Fused attention (kernels/attention/attention.h) on every ISA against an exact float64 computation
// and against `ref`: one head of a [seq, H*dh] activation (row strides wider than dh, every pointer
// misaligned by 4 bytes), seq 1..130, seqKv != seqQ, dh in {1, 8, 17, 20, 64} (partial 16-column
// tiles), no mask / key mask / [seq, seq] mask with -inf and -1e9 entries, causal, row sub-ranges.
// Only the head's columns of the selected rows may change; a canary follows the output.
// Then the 'Attention' op: head subsets, packed and full outputs, mask broadcasts, 1 and 2 threads.
//
// Tolerance per output row i (attention.h): |o - exact| <= max|v| * 2^-24 * (2 (dh + 1) sigma_i + nk + 16)
// with sigma_i = scale * max_j sum_d |q_id k_jd| + max_j |mask_ij| (masked-out entries <= -1e4 excluded)
// and nk the number of keys row i sees: the float rounding of the dot products moves each probability
// by at most its score error, the vector exp adds < 2^-23, the float sums nk * 2^-24.
import t from 'tap'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { attentionKernelCall, attentionWorkspaceBytes } from '../../lib/model/ops/nn-attention.js'
import { Guarded, isas, random, simdIsas, xf } from '../helpers/xf.js'

interface Case {
  sq: number
  sk: number
  dh: number
  heads: number
  head: number
  causal: boolean
  mask: 'none' | 'key' | 'full'
  rows?: [number, number]
  seed: number
}

const sentinel = 777.25

interface Data {
  ld: number
  q: Float32Array
  k: Float32Array
  v: Float32Array
  mask: Float32Array | null
  maskLd: number
  scale: number
}

function makeData(c: Case): Data {
  const ld = c.heads * c.dh + 3 // wider than the heads, not a multiple of anything
  const q = random(c.sq * ld, c.seed)
  const k = random(c.sk * ld, c.seed + 1)
  const v = random(c.sk * ld, c.seed + 2, -2, 2)
  let mask: Float32Array | null = null
  let maskLd = 0
  if (c.mask !== 'none') {
    maskLd = c.mask === 'full' ? c.sk + 2 : 0
    mask = random(c.mask === 'full' ? c.sq * maskLd : c.sk, c.seed + 3, -2, 0)
    // some keys masked out, but never a whole row (that gives NaN; tested separately)
    for (let i = 1; i < mask.length; i += 7) mask[i] = i % 2 ? -Infinity : -1e9
  }
  return { ld, q, k, v, mask, maskLd, scale: 1 / Math.sqrt(c.dh) }
}

/** Exact attention of one head (float64) and the per-row tolerance. */
function exact(c: Case, d: Data): { o: Float64Array; tol: Float64Array } {
  const { dh } = c
  const o = new Float64Array(c.sq * dh)
  const tol = new Float64Array(c.sq)
  let maxV = 0
  for (let j = 0; j < c.sk; j++) for (let e = 0; e < dh; e++) maxV = Math.max(maxV, Math.abs(d.v[j * d.ld + c.head * dh + e]!))
  const s = new Float64Array(c.sk)
  for (let i = 0; i < c.sq; i++) {
    const nk = c.causal ? Math.min(i + 1, c.sk) : c.sk
    let sigma = 0
    let maskMax = 0
    let m = -Infinity
    for (let j = 0; j < nk; j++) {
      let dot = 0
      let abs = 0
      for (let e = 0; e < dh; e++) {
        const p = d.q[i * d.ld + c.head * dh + e]! * d.k[j * d.ld + c.head * dh + e]!
        dot += p
        abs += Math.abs(p)
      }
      const mk = d.mask ? d.mask[i * d.maskLd + j]! : 0
      s[j] = dot * d.scale + mk
      sigma = Math.max(sigma, abs * d.scale)
      if (mk > -1e4) maskMax = Math.max(maskMax, Math.abs(mk))
      m = Math.max(m, s[j]!)
    }
    let sum = 0
    for (let j = 0; j < nk; j++) sum += (s[j] = Math.exp(s[j]! - m))
    for (let j = 0; j < nk; j++) {
      const p = s[j]! / sum
      for (let e = 0; e < dh; e++) o[i * dh + e]! += p * d.v[j * d.ld + c.head * dh + e]!
    }
    tol[i] = maxV * 2 ** -24 * (2 * (dh + 1) * (sigma + maskMax) + nk + 16)
  }
  return { o, tol }
}

/** Runs the kernel of `isa` on a guarded output; returns it (rows x ld) and whether the canary held. */
function run(isa: string, c: Case, d: Data): { out: Float32Array; intact: boolean } {
  const g = new Guarded(c.sq * d.ld, sentinel)
  const off = c.head * c.dh
  const view = (a: Float32Array): Float32Array => Guarded.of(a).view.subarray(off)
  xf.xfAttention(isa, {
    q: view(d.q),
    k: view(d.k),
    v: view(d.v),
    out: g.view.subarray(off),
    mask: d.mask ? Guarded.of(d.mask).view : null,
    maskLd: d.maskLd,
    seqQ: c.sq,
    seqKv: c.sk,
    dh: c.dh,
    ldq: d.ld,
    ldk: d.ld,
    ldv: d.ld,
    ldo: d.ld,
    scale: d.scale,
    causal: c.causal,
    rowBegin: c.rows?.[0] ?? 0,
    rowEnd: c.rows?.[1] ?? c.sq,
  })
  return { out: g.view, intact: g.intact() }
}

const describe = (c: Case): string =>
  `sq=${c.sq} sk=${c.sk} dh=${c.dh} H=${c.heads} head=${c.head} causal=${c.causal} mask=${c.mask} rows=${c.rows?.join('..') ?? 'all'} seed=${c.seed}`

/** Checks one run: the head's columns of the selected rows within tol of want, everything else untouched. */
function check(c: Case, d: Data, got: { out: Float32Array; intact: boolean }, want: Float64Array, tol: Float64Array, k = 1): string | undefined {
  if (!got.intact) return 'canary overwritten'
  const [r0, r1] = c.rows ?? [0, c.sq]
  for (let i = 0; i < c.sq; i++) {
    for (let col = 0; col < d.ld; col++) {
      const g = got.out[i * d.ld + col]!
      const e = col - c.head * c.dh
      const inHead = e >= 0 && e < c.dh && i >= r0 && i < r1
      if (!inHead) {
        if (g !== sentinel) return `row ${i} col ${col} outside the head/rows was written (${g})`
        continue
      }
      const w = want[i * c.dh + e]!
      if (!(Math.abs(g - w) <= k * tol[i]!)) return `row ${i} col ${e}: got ${g}, want ${w} (tol ${k * tol[i]!})`
    }
  }
  return undefined
}

function cases(): Case[] {
  const out: Case[] = []
  let seed = 1
  const masks = ['none', 'key', 'full'] as const
  for (let s = 1; s <= 130; s++) {
    out.push({ sq: s, sk: s, dh: 8, heads: 2, head: 1, causal: s % 2 === 0, mask: masks[s % 3]!, seed: seed++ })
  }
  for (const dh of [1, 17, 20, 64]) {
    for (const s of [1, 5, 6, 7, 16, 17, 33, 64, 127, 130]) {
      for (const causal of [false, true]) {
        out.push({ sq: s, sk: s, dh, heads: 3, head: 2, causal, mask: masks[(s + dh) % 3]!, seed: seed++ })
      }
    }
  }
  out.push({ sq: 5, sk: 130, dh: 20, heads: 2, head: 0, causal: false, mask: 'full', seed: seed++ })
  out.push({ sq: 130, sk: 3, dh: 64, heads: 2, head: 1, causal: true, mask: 'key', seed: seed++ })
  out.push({ sq: 9, sk: 0, dh: 17, heads: 1, head: 0, causal: false, mask: 'none', seed: seed++ })
  out.push({ sq: 40, sk: 40, dh: 64, heads: 3, head: 1, causal: true, mask: 'full', rows: [3, 38], seed: seed++ })
  out.push({ sq: 40, sk: 40, dh: 20, heads: 3, head: 0, causal: false, mask: 'key', rows: [13, 14], seed: seed++ })
  return out
}

for (const isa of isas) {
  t.test(`attention_f32 ${isa} matches the exact float64 attention`, async (t) => {
    let bad = 0
    for (const c of cases()) {
      const d = makeData(c)
      const { o, tol } = exact(c, d)
      const err = check(c, d, run(isa, c, d), o, tol)
      if (err !== undefined && bad++ < 10) t.fail(`${describe(c)}: ${err}`)
    }
    t.equal(bad, 0, 'cases outside the bound')
  })
}

for (const isa of simdIsas) {
  t.test(`attention_f32 ${isa} equals ref within twice the bound`, async (t) => {
    let bad = 0
    for (const c of cases().filter((_, i) => i % 2 === 0)) {
      const d = makeData(c)
      const { tol } = exact(c, d)
      const ref = run('ref', c, d).out
      const want = new Float64Array(c.sq * c.dh)
      for (let i = 0; i < c.sq; i++) for (let e = 0; e < c.dh; e++) want[i * c.dh + e] = ref[i * d.ld + c.head * c.dh + e]!
      const err = check(c, d, run(isa, c, d), want, tol, 2)
      if (err !== undefined && bad++ < 10) t.fail(`${describe(c)}: ${err}`)
    }
    t.equal(bad, 0, 'cases outside the bound')
  })
}

t.test('a fully masked row gives NaN on every ISA (as Softmax of all -inf does)', async (t) => {
  const c: Case = { sq: 3, sk: 4, dh: 8, heads: 1, head: 0, causal: false, mask: 'full', seed: 5 }
  const d = makeData(c)
  d.mask!.fill(0)
  d.mask!.fill(-Infinity, d.maskLd, d.maskLd + c.sk) // row 1
  for (const isa of isas) {
    const { out } = run(isa, c, d)
    t.ok(Number.isNaN(out[d.ld]!) && Number.isFinite(out[0]!) && Number.isFinite(out[2 * d.ld]!), `${isa}: row 1 NaN, rows 0 and 2 finite`)
  }
})

// ---- the 'Attention' op -------------------------------------------------------------------------------

const native = binding()
const f32 = (dims: number[], data: Float32Array): NativeTensor => ({ dtype: 1, dims, data })
const workspace = (bytes: number): NativeTensor => ({ dtype: 2, dims: [bytes], data: new Uint8Array(bytes) })

interface OpCase {
  b: number
  s: number
  sk: number
  heads: number
  dh: number
  list: number[]
  packed: boolean
  causal: boolean
  maskDims: number[] | null
  threads: number
  wsThreads: number
}

function runOpCase(c: OpCase, seed: number): string | undefined {
  const hid = c.heads * c.dh
  const q = random(c.b * c.s * hid, seed)
  const k = random(c.b * c.sk * hid, seed + 1)
  const v = random(c.b * c.sk * hid, seed + 2)
  const maskData = c.maskDims ? random(c.maskDims.reduce((p, x) => p * x, 1), seed + 3, -3, 0) : null
  const listed = c.list.length ? c.list : Array.from({ length: c.heads }, (_, i) => i)
  const ow = c.packed ? listed.length * c.dh : hid
  const o = new Float32Array(c.b * c.s * ow).fill(sentinel)
  const wsBytes = c.wsThreads * 4 * xf.xfAttentionWorkspaceFloats(c.sk, c.dh)
  const inputs = [f32([c.b, c.s, hid], q), f32([c.b, c.sk, hid], k), f32([c.b, c.sk, hid], v)]
  if (maskData) inputs.push(f32(c.maskDims!, maskData))
  native.runOp('Attention', inputs, [f32([c.b, c.s, ow], o), workspace(wsBytes)], [c.heads, c.causal ? 1 : 0, ...c.list], [], c.threads)
  // mask element (b, h, i, j) through right-aligned broadcasting to [B, H, S, Sk]
  const md = c.maskDims ?? []
  const maskAt = (idx: number[]): number => {
    let off = 0
    for (let a = 0; a < md.length; a++) {
      const fa = a + 4 - md.length
      off = off * md[a]! + (md[a] === 1 ? 0 : idx[fa]!)
    }
    return maskData![off]!
  }
  for (let b = 0; b < c.b; b++) {
    for (let li = 0; li < listed.length; li++) {
      const h = listed[li]!
      const cs: Case = { sq: c.s, sk: c.sk, dh: c.dh, heads: c.heads, head: h, causal: c.causal, mask: 'none', seed }
      const mask = new Float32Array(c.s * c.sk)
      if (maskData) for (let i = 0; i < c.s; i++) for (let j = 0; j < c.sk; j++) mask[i * c.sk + j] = maskAt([b, h, i, j])
      const d: Data = {
        ld: hid,
        q: q.subarray(b * c.s * hid),
        k: k.subarray(b * c.sk * hid),
        v: v.subarray(b * c.sk * hid),
        mask: maskData ? mask : null,
        maskLd: c.sk,
        scale: 1 / Math.sqrt(c.dh),
      }
      const { o: want, tol } = exact(cs, d)
      const col0 = (c.packed ? li : h) * c.dh
      for (let i = 0; i < c.s; i++) {
        for (let e = 0; e < c.dh; e++) {
          const g = o[(b * c.s + i) * ow + col0 + e]!
          if (!(Math.abs(g - want[i * c.dh + e]!) <= tol[i]!)) return `b=${b} head=${h} row ${i} col ${e}: got ${g}, want ${want[i * c.dh + e]}`
        }
      }
    }
    if (!c.packed) {
      for (let h = 0; h < c.heads; h++) {
        if (listed.includes(h)) continue
        for (let i = 0; i < c.s; i++)
          for (let e = 0; e < c.dh; e++) if (o[(b * c.s + i) * ow + h * c.dh + e] !== 0) return `unlisted head ${h} not zeroed`
      }
    }
  }
  return undefined
}

t.test('the Attention op computes the listed heads (subsets, masks, causal, packed, threads)', async (t) => {
  const base: OpCase = { b: 2, s: 19, sk: 19, heads: 4, dh: 16, list: [], packed: false, causal: false, maskDims: null, threads: 1, wsThreads: 1 }
  const variants: Partial<OpCase>[] = [
    {},
    { list: [2, 0], threads: 2, wsThreads: 2 },
    { list: [3], packed: true, threads: 2, wsThreads: 2 },
    { list: [1, 3, 0], packed: true, causal: true, maskDims: [19] },
    { causal: true, maskDims: [19, 19], threads: 2, wsThreads: 2 },
    { maskDims: [2, 1, 1, 19], list: [0, 1] },
    { maskDims: [2, 4, 19, 19], threads: 2, wsThreads: 1 }, // workspace for one thread: runs on one
    { b: 1, s: 130, sk: 130, heads: 2, dh: 64, list: [1], causal: true, threads: 2, wsThreads: 2 },
    { b: 1, s: 7, sk: 33, heads: 3, dh: 20, list: [2, 1], maskDims: [1, 7, 33], threads: 2, wsThreads: 8 },
  ]
  variants.forEach((v, i) => {
    const c = { ...base, ...v }
    const err = runOpCase(c, 100 + i)
    t.equal(err, undefined, JSON.stringify(c))
  })
})

t.test('the Attention op rejects bad calls', async (t) => {
  const q = f32([4, 8], new Float32Array(32))
  const o = f32([4, 8], new Float32Array(32))
  const ws = workspace(4 * xf.xfAttentionWorkspaceFloats(4, 4))
  t.throws(() => native.runOp('Attention', [q, q, q], [o, workspace(16)], [2, 0], []), /workspace/)
  t.throws(() => native.runOp('Attention', [q, q, q], [o], [2, 0], []), /Attention/)
  t.throws(() => native.runOp('Attention', [q, q, q], [o, ws], [2, 0, 2], []), /head 2/)
  t.throws(() => native.runOp('Attention', [q, q, q], [o, ws], [2, 0, 1, 1], []), /repeated/)
  t.throws(() => native.runOp('Attention', [q, q, q], [o, ws], [3, 0], []), /multiple of the head count/)
  t.throws(() => native.runOp('Attention', [q, q, q, f32([3], new Float32Array(3))], [o, ws], [2, 0], []), /mask/)
  t.throws(() => native.runOp('Attention', [q, q, q], [f32([4, 6], new Float32Array(24)), ws], [2, 0, 1], []), /O must be/)
  t.doesNotThrow(() => native.runOp('Attention', [q, q, q], [f32([4, 4], new Float32Array(16)), ws], [2, 0, 1], []))
})

t.test('attentionKernelCall sizes the workspace as the op expects', async (t) => {
  for (const [sk, dh] of [[1, 1], [128, 64], [130, 20], [7, 96]] as const) {
    t.equal(attentionWorkspaceBytes(sk, dh, 1), 4 * xf.xfAttentionWorkspaceFloats(sk, dh), `seqKv=${sk} dh=${dh}`)
  }
  const call = attentionKernelCall({ q: 0, k: 1, v: 2, heads: 12, dh: 64, seqKv: 128, list: [3, 5], causal: true })
  t.same(call.ints, [12, 1, 3, 5])
  t.same(call.inputs, [0, 1, 2, -1])
  t.equal(call.workspace, 8 * 4 * xf.xfAttentionWorkspaceFloats(128, 64))
})
