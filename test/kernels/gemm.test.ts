// SPDX-License-Identifier: Apache-2.0
// The packed-panel GEMM (native/runtime/gemm_driver.h) on every ISA this machine runs, against an
// exact float64 product and against the `ref` ISA: shapes {1, MR-1, MR, MR+1, prime} x {1, NR-1, NR,
// NR+1, prime} x {1, 7, KC+1, prime}, strides wider than the matrices, A misaligned by 4 bytes,
// transposed operands, column-strided C, bias / beta / clamp epilogues, weight slices (partial packed
// B, columns n0..n1) and input slices (rows m0..m1 only) leaving the rest of C untouched, a canary
// after C, 1 and 2 threads. Then the MatMul/Gemm ops with a gemm_pack_b prepacked B and a fused clamp.
// Tolerance (gemm.h): |got - exact| <= K * 2^-20 * (|alpha| sum_p |a b| + |beta c| + |bias|).
import t, { type Test } from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { gemmWorkspaceBytes } from '../../lib/model/ops/nn-matmul.js'

interface GemmInfo {
  mr: number
  nr: number
  mc: number
  kc: number
  nc: number
  tilePanels: number
}
type GemmFn = (isa: string, o: Record<string, unknown>) => number
const native = binding()
const testing = native._testing as unknown as {
  isas(): string[]
  gemmInfo(isa: string): GemmInfo
  gemm: GemmFn
  gemmWorkspaceBytes(isa: string, m: number, n: number, k: number, threads: number, rawB: boolean): number
}
const isas = testing.isas()

interface Case {
  m: number
  n: number
  k: number
  ta?: boolean
  tb?: boolean
  cT?: boolean
  packB?: boolean
  alpha?: number
  beta?: number
  bias?: boolean
  clamp?: [number, number]
  threads?: number
  m0?: number
  m1?: number
  n0?: number
  n1?: number
  packN0?: number
  packN1?: number
  aSlice?: boolean
  /** Operands read where they are (GemmProblem a_in_place / b_in_place), and a per-row bias. */
  aInPlace?: boolean
  bInPlace?: boolean
  rowBias?: boolean
  /** A residual R added in the epilogue (GemmProblem add, laid out as C). */
  add?: boolean
  seed?: number
}

const canary = 16

function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = rand() * 2 - 1
  return out
}

/** Operands of a case laid out with padded strides; `a` is a view 4 bytes into its buffer. */
function operands(c: Case) {
  const { m, n, k } = c
  const m0 = c.m0 ?? 0
  const m1 = c.m1 ?? m
  const seed = c.seed ?? m * 1000003 + n * 1009 + k
  const aRows = c.aSlice ? m1 - m0 : m
  const a = c.ta
    ? { rs: 1, cs: aRows + 3, len: k * (aRows + 3) }
    : { rs: k + 3, cs: 1, len: aRows * (k + 3) }
  const b = c.tb ? { rs: 1, cs: k + 5, len: n * (k + 5) } : { rs: n + 5, cs: 1, len: k * (n + 5) }
  const cl = c.cT ? { rs: 1, cs: m + 2, len: n * (m + 2) } : { rs: n + 2, cs: 1, len: m * (n + 2) }
  const aData = random(a.len + 1, seed).subarray(1)
  const bData = random(b.len, seed + 1)
  const c0 = random(cl.len + canary, seed + 2)
  if ((c.beta ?? 0) === 0) c0.fill(NaN, 0, cl.len) // beta 0 must not read C
  const bias = c.bias ? random(n, seed + 3) : undefined
  const rowBias = c.rowBias ? random(m1, seed + 4) : undefined
  const add = c.add ? random(cl.len, seed + 5) : undefined
  return { a, b, cl, aData, bData, c0, bias, rowBias, add, aRow0: c.aSlice ? m0 : 0, m0, m1, n0: c.n0 ?? 0, n1: c.n1 ?? n }
}

function run(isa: string, c: Case, o: ReturnType<typeof operands>): Float32Array {
  const out = o.c0.slice()
  testing.gemm(isa, {
    k: c.k, a: o.aData, aRs: o.a.rs, aCs: o.a.cs, aRow0: o.aRow0,
    b: o.bData, bRs: o.b.rs, bCs: o.b.cs, packB: c.packB ?? false, packN0: c.packN0, packN1: c.packN1,
    c: out, cRs: o.cl.rs, cCs: o.cl.cs, m0: o.m0, m1: o.m1, n0: o.n0, n1: o.n1,
    alpha: c.alpha ?? 1, beta: c.beta ?? 0, bias: o.bias, clamp: c.clamp, threads: c.threads ?? 1,
    rowBias: o.rowBias, aInPlace: c.aInPlace ?? false, bInPlace: c.bInPlace ?? false, add: o.add,
  })
  return out
}

/** Every element of C checked: inside the ranges against the exact value, outside (and the canary) unchanged. */
function check(c: Case, o: ReturnType<typeof operands>, got: Float32Array, ref?: Float32Array): string | undefined {
  const alpha = c.alpha ?? 1
  const beta = c.beta ?? 0
  const inside = new Uint8Array(got.length)
  for (let i = o.m0; i < o.m1; i++) {
    for (let j = o.n0; j < o.n1; j++) {
      const ci = i * o.cl.rs + j * o.cl.cs
      inside[ci] = 1
      let sum = 0
      let abs = 0
      for (let p = 0; p < c.k; p++) {
        const x = o.aData[(i - o.aRow0) * o.a.rs + p * o.a.cs]! * o.bData[p * o.b.rs + j * o.b.cs]!
        sum += x
        abs += Math.abs(x)
      }
      const cv = beta === 0 ? 0 : beta * o.c0[ci]!
      const bv = (o.bias ? o.bias[j]! : 0) + (o.rowBias ? o.rowBias[i]! : 0) + (o.add ? o.add[ci]! : 0)
      let want = alpha * sum + cv + bv
      if (c.clamp) want = Math.min(Math.max(want, c.clamp[0]), c.clamp[1])
      const tol = Math.max(1, c.k) * 2 ** -20 * (Math.abs(alpha) * abs + Math.abs(cv) + Math.abs(bv))
      const g = got[ci]!
      if (!(Math.abs(g - want) <= tol)) return `C[${i}, ${j}] = ${g}, exact ${want}, tolerance ${tol}`
      if (ref && !(Math.abs(g - ref[ci]!) <= tol)) return `C[${i}, ${j}] = ${g}, ref ISA ${ref[ci]}, tolerance ${tol}`
    }
  }
  for (let x = 0; x < got.length; x++) {
    if (!inside[x] && !Object.is(got[x], o.c0[x])) {
      return `${x < o.cl.len ? 'C outside the ranges' : 'canary'} changed at element ${x}: ${o.c0[x]} -> ${got[x]}`
    }
  }
  return undefined
}

function describe(isa: string, c: Case): string {
  return `${isa} ${JSON.stringify(c)}`
}

/** Runs c on isa (and on ref for comparison); one test point per case, failures print every parameter. */
function gemmCase(t: Test, isa: string, c: Case): void {
  const o = operands(c)
  let why: string | undefined
  try {
    const ref = isa === 'ref' ? undefined : run('ref', c, o)
    why = check(c, o, run(isa, c, o), ref)
  } catch (err) {
    why = `threw ${(err as Error).message}`
  }
  t.ok(why === undefined, why === undefined ? describe(isa, c) : `${describe(isa, c)}: ${why}`)
}

const primeM = 97
const primeN = 67
const primeK = 131

for (const isa of isas) {
  const g = testing.gemmInfo(isa)
  const ms = [1, g.mr - 1, g.mr, g.mr + 1, primeM].filter((x) => x >= 1)
  const ns = [1, g.nr - 1, g.nr, g.nr + 1, 2 * g.nr - 1, 2 * g.nr + 1, primeN]
  const ks = [1, 7, g.kc + 1, primeK]

  t.test(`gemm ${isa} (tile ${g.mr}x${g.nr * g.tilePanels}, kc ${g.kc}) raw B on 1 thread equals the exact product`, async (t) => {
    for (const m of ms) for (const n of ns) for (const k of ks) gemmCase(t, isa, { m, n, k })
  })

  t.test(`gemm ${isa} packed B with bias and beta 1 on 2 threads equals the exact product`, async (t) => {
    for (const m of ms) for (const n of ns) for (const k of ks) gemmCase(t, isa, { m, n, k, packB: true, bias: true, beta: 1, threads: 2 })
  })

  t.test(`gemm ${isa} transposed operands, column-strided C, alpha, beta and clamp`, async (t) => {
    for (const [m, n, k] of [[g.mr + 1, g.nr + 1, 7], [primeM, primeN, g.kc + 1], [1, primeN, primeK], [primeM, 1, primeK]] as const) {
      for (const threads of [1, 2]) {
        const base = { m, n, k, alpha: 0.5, beta: -1.5, clamp: [-0.3, 0.4] as [number, number], threads }
        gemmCase(t, isa, { ...base, ta: true, tb: true, packB: true })
        gemmCase(t, isa, { ...base, ta: true, cT: true })
        gemmCase(t, isa, { ...base, tb: true, cT: true, bias: true, packB: true })
        gemmCase(t, isa, { m, n, k, threads, clamp: [0, Infinity], bias: true, packB: true }) // fused ReLU
      }
    }
  })

  t.test(`gemm ${isa} operands read in place (no packing) with a row bias equal the exact product`, async (t) => {
    for (const m of ms) {
      for (const n of [...ns, 3 * g.nr, 3 * g.nr + 5]) {
        for (const k of ks) {
          gemmCase(t, isa, { m, n, k, aInPlace: true, bInPlace: true, rowBias: true })
          gemmCase(t, isa, { m, n, k, aInPlace: true, bInPlace: true, rowBias: true, clamp: [0, 6], threads: 2 })
          gemmCase(t, isa, { m, n, k, aInPlace: true, packB: true, rowBias: true, threads: 2 })
          gemmCase(t, isa, { m, n, k, bInPlace: true, beta: 1, bias: true })
        }
      }
    }
    // B rows a whole number of 64-byte lines apart (n + 5 = 48 or 64 floats) are read in place; other
    // strides (every case above) copy each panel's k-block before the row groups that share it, when
    // k > 64 and there are >= 4 row groups: both ways, on 1 and 2 threads, with column slices.
    for (const n of [43, 59]) {
      for (const threads of [1, 2]) {
        gemmCase(t, isa, { m: primeM, n, k: primeK, threads, aInPlace: true, bInPlace: true, rowBias: true, clamp: [0, 6] })
        gemmCase(t, isa, { m: primeM, n, k: primeK, threads, n0: 3, n1: n - 1, aInPlace: true, bInPlace: true, beta: 1 })
        gemmCase(t, isa, { m: primeM, n: n + 1, k: primeK, threads, n0: 3, n1: n - 1, aInPlace: true, bInPlace: true, beta: 1 })
      }
    }
    // Narrow right edges (1..4 columns past the last full panel) go through row dots: with beta 1
    // and a column bias, on row slices, on 1 and 2 threads.
    for (const tail of [1, 2, 3, 4]) {
      for (const threads of [1, 2]) {
        const n = 2 * g.nr + tail
        gemmCase(t, isa, { m: primeM, n, k: primeK, threads, aInPlace: true, bInPlace: true, rowBias: true, beta: 1, bias: true })
        gemmCase(t, isa, { m: primeM, n, k: g.kc + 1, threads, m0: 10, m1: 50, aSlice: true, aInPlace: true, bInPlace: true, rowBias: true, clamp: [0, 6] })
        gemmCase(t, isa, { m: 7, n: tail, k: 9, threads, aInPlace: true, bInPlace: true, rowBias: true })
      }
    }
    // Column and row slices, transposed A read in place, and requests the driver must decline
    // (alpha != 1 packs A; column-strided C and transposed B pack B).
    for (const threads of [1, 2]) {
      const n = 3 * g.nr + 5
      for (const [n0, n1] of [[0, g.nr], [g.nr - 3, n - 2], [5, 6], [g.nr, n]] as const) {
        gemmCase(t, isa, { m: primeM, n, k: primeK, threads, n0, n1, aInPlace: true, bInPlace: true, rowBias: true })
      }
      for (const [m0, m1] of [[g.mr - 1, 2 * g.mr + 1], [50, primeM]] as const) {
        gemmCase(t, isa, { m: primeM, n, k: g.kc + 1, threads, m0, m1, aSlice: true, aInPlace: true, bInPlace: true, rowBias: true, beta: 1 })
      }
      gemmCase(t, isa, { m: primeM, n: primeN, k: primeK, threads, ta: true, aInPlace: true, bInPlace: true })
      gemmCase(t, isa, { m: primeM, n: primeN, k: primeK, threads, alpha: 0.5, aInPlace: true, bInPlace: true, rowBias: true })
      gemmCase(t, isa, { m: primeM, n: primeN, k: primeK, threads, cT: true, tb: true, aInPlace: true, bInPlace: true })
    }
  })

  t.test(`gemm ${isa} with a residual added in the epilogue (a Conv fused with its Add) equals the exact product + R`, async (t) => {
    // every path of the driver: packed tiles (several k-blocks: R only in the first), in-place tiles
    // and copied B panels, the narrow right edge by row dots, column-strided C through the tile
    // buffer, row and column slices, clamp after the sum; 1 and 2 threads
    for (const threads of [1, 2]) {
      for (const [m, n, k] of [[g.mr + 1, g.nr + 1, 7], [primeM, primeN, primeK], [primeM, 2 * g.nr + 1, g.kc + 1], [1, primeN, 2 * g.kc + 3]] as const) {
        gemmCase(t, isa, { m, n, k, threads, add: true })
        gemmCase(t, isa, { m, n, k, threads, add: true, packB: true, bias: true, clamp: [0, Infinity] })
        gemmCase(t, isa, { m, n, k, threads, add: true, aInPlace: true, bInPlace: true, rowBias: true, clamp: [0, 6] })
        gemmCase(t, isa, { m, n, k, threads, add: true, tb: true, cT: true })
      }
      for (const n of [43, 59, 2 * g.nr + 3]) {
        gemmCase(t, isa, { m: primeM, n, k: primeK, threads, add: true, aInPlace: true, bInPlace: true, rowBias: true, clamp: [0, Infinity] })
        gemmCase(t, isa, { m: primeM, n, k: g.kc + 1, threads, add: true, n0: 3, n1: n - 1, m0: 10, m1: 50, aSlice: true, aInPlace: true, bInPlace: true })
      }
    }
  })

  t.test(`gemm ${isa} K = 0 gives beta C + bias`, async (t) => {
    gemmCase(t, isa, { m: g.mr + 1, n: g.nr + 1, k: 0, beta: 2, bias: true })
    gemmCase(t, isa, { m: primeM, n: primeN, k: 0, packB: true, bias: true, threads: 2 })
  })

  t.test(`gemm ${isa} weight slices and input slices write only their part of C`, async (t) => {
    const m = primeM
    const n = 3 * g.nr + 5
    for (const k of [7, g.kc + 1]) {
      for (const threads of [1, 2]) {
        const slices: Array<[number, number]> = [[0, g.nr], [g.nr, 2 * g.nr + 3], [g.nr - 3, n - 2], [2 * g.nr + 3, n], [5, 6]]
        for (const [n0, n1] of slices) {
          gemmCase(t, isa, { m, n, k, threads, n0, n1, packB: true, packN0: n0, packN1: n1, beta: 1, bias: true })
          gemmCase(t, isa, { m, n, k, threads, n0, n1, packB: true, packN0: 0, packN1: n })
          gemmCase(t, isa, { m, n, k, threads, n0, n1 }) // raw B column range
        }
        for (const [m0, m1] of [[0, g.mr], [g.mr - 1, 2 * g.mr + 1], [50, m], [10, 11]] as const) {
          gemmCase(t, isa, { m, n, k, threads, m0, m1, aSlice: true, packB: true, beta: 1 })
          gemmCase(t, isa, { m, n, k, threads, m0, m1, n0: g.nr + 1, n1: n - 1, packB: true, packN0: g.nr + 1, packN1: n - 1, cT: true })
        }
      }
    }
  })

  t.test(`gemm ${isa} slices written one after another make the whole product`, async (t) => {
    const c: Case = { m: primeM, n: 2 * g.nr + 9, k: primeK, packB: true, threads: 2 }
    const o = operands(c)
    const whole = run(isa, c, o)
    const out = o.c0.slice()
    for (const [n0, n1] of [[0, g.nr + 3], [g.nr + 3, c.n]] as const) {
      for (const [m0, m1] of [[0, 40], [40, c.m]] as const) {
        testing.gemm(isa, {
          k: c.k, a: o.aData.subarray(m0 * o.a.rs), aRs: o.a.rs, aCs: o.a.cs, aRow0: m0,
          b: o.bData, bRs: o.b.rs, bCs: o.b.cs, packB: true, packN0: n0, packN1: n1,
          c: out, cRs: o.cl.rs, cCs: o.cl.cs, m0, m1, n0, n1, threads: 2,
        })
      }
    }
    t.same(Array.from(out), Array.from(whole), describe(isa, c))
  })
}

t.test('the TypeScript workspace size bounds the native one on every ISA', async (t) => {
  let checked = 0
  const short: string[] = []
  for (const isa of isas) {
    for (const m of [1, 5, 6, 7, 8, 9, 97, 128, 143, 145, 1000]) {
      for (const n of [1, 11, 12, 13, 15, 16, 17, 97, 768]) {
        for (const k of [0, 1, 7, 255, 257, 511, 513, 3072]) {
          for (const threads of [1, 2, 8]) {
            for (const rawB of [false, true]) {
              const need = testing.gemmWorkspaceBytes(isa, m, n, k, threads, rawB)
              const have = gemmWorkspaceBytes(m, n, k, threads, rawB)
              if (have < need) short.push(`${isa} m=${m} n=${n} k=${k} threads=${threads} rawB=${rawB}: TS ${have} < native ${need}`)
              checked++
            }
          }
        }
      }
    }
  }
  t.same(short, [], `the TypeScript size is at least the native one on all ${checked} shapes`)
})

// The ops on the selected ISA, with B packed by the plan-time transform.
const F32 = 1
const U8 = 2
function f32(dims: number[], data: Float32Array): NativeTensor {
  return { dtype: F32, dims, data }
}
function naive(a: Float32Array, b: Float32Array, m: number, n: number, k: number, bT: boolean): Float64Array {
  const y = new Float64Array(m * n)
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) y[i * n + j]! += a[i * k + p]! * b[bT ? j * k + p : p * n + j]!
  return y
}
function maxDiff(got: Float32Array, want: Float64Array): number {
  let d = 0
  for (let i = 0; i < want.length; i++) d = Math.max(d, Math.abs(got[i]! - want[i]!))
  return Number.isNaN(d) ? Infinity : d
}

t.test('MatMul and Gemm run the packed path on a gemm_pack_b weight', async (t) => {
  const [m, n, k] = [37, 45, 70]
  const a = random(m * k, 1)
  const w = random(k * n, 2)
  const bias = random(n, 3)
  for (const threads of [1, 2]) {
    const packed = native.prepack('gemm_pack_b', f32([k, n], w), [0])
    t.equal(packed.dims[1], k, 'packed dims are [panels, K, NR]')
    const pb = f32(packed.dims, new Float32Array(packed.data))
    const ws = gemmWorkspaceBytes(m, n, k, 8, false)
    const y = new Float32Array(m * n)
    native.runOp('MatMul', [f32([1, m, k], a), pb], [f32([1, m, n], y), { dtype: U8, dims: [ws], data: new Uint8Array(ws) }], [1], [], threads)
    t.ok(maxDiff(y, naive(a, w, m, n, k, false)) < 1e-4, `MatMul packed, threads ${threads}`)
    const wT = new Float32Array(n * k)
    for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) wT[j * k + p] = w[p * n + j]!
    const pT = native.prepack('gemm_pack_b', f32([n, k], wT), [1])
    t.same(Array.from(new Float32Array(pT.data)), Array.from(pb.data as Float32Array), 'transB packing equals packing Wᵀ')
    const yg = new Float32Array(m * n)
    native.runOp('Gemm', [f32([m, k], a), f32(pT.dims, new Float32Array(pT.data)), f32([n], bias)], [f32([m, n], yg), { dtype: U8, dims: [ws], data: new Uint8Array(ws) }], [0, 1, 1], [1, 1], threads)
    const want = naive(a, w, m, n, k, false).map((v, i) => v + bias[i % n]!)
    t.ok(maxDiff(yg, want) < 1e-4, `Gemm transB packed with bias, threads ${threads}`)
  }
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), f32([1, k, 16], new Float32Array(k * 16))], [f32([m, n], new Float32Array(m * n))], [1], []), /packed B/)
})

t.test('MatMul and Gemm apply a fused activation clamp on the packed and the reference path', async (t) => {
  const [m, n, k] = [13, 21, 33]
  const a = random(m * k, 6)
  const w = random(k * n, 7)
  const exact = naive(a, w, m, n, k, false)
  const clampTo = (lo: number, hi: number): Float64Array => exact.map((v) => Math.min(Math.max(v, lo), hi))
  const packed = native.prepack('gemm_pack_b', f32([k, n], w), [0])
  const pb = f32(packed.dims, new Float32Array(packed.data))
  const ws = gemmWorkspaceBytes(m, n, k, 8, true)
  const wsT = (): NativeTensor => ({ dtype: U8, dims: [ws], data: new Uint8Array(ws) })
  for (const [lo, hi] of [[0, Infinity], [-0.5, 0.5]] as const) {
    const y1 = new Float32Array(m * n)
    native.runOp('MatMul', [f32([m, k], a), pb], [f32([m, n], y1), wsT()], [1], [lo, hi], 2)
    t.ok(maxDiff(y1, clampTo(lo, hi)) < 1e-4, `MatMul packed, clamp [${lo}, ${hi}]`)
    const y2 = new Float32Array(m * n)
    native.runOp('MatMul', [f32([m, k], a), f32([k, n], w)], [f32([m, n], y2)], [], [lo, hi], 2)
    t.ok(maxDiff(y2, clampTo(lo, hi)) < 1e-4, `MatMul reference, clamp [${lo}, ${hi}]`)
    const y3 = new Float32Array(m * n)
    native.runOp('Gemm', [f32([m, k], a), f32([k, n], w)], [f32([m, n], y3), wsT()], [0, 0, 0], [1, 1, lo, hi], 2)
    t.ok(maxDiff(y3, clampTo(lo, hi)) < 1e-4, `Gemm raw B, clamp [${lo}, ${hi}]`)
    const y4 = new Float32Array(m * n)
    native.runOp('Gemm', [f32([m, k], a), f32([k, n], w)], [f32([m, n], y4)], [0, 0], [1, 1, lo, hi], 2)
    t.ok(maxDiff(y4, clampTo(lo, hi)) < 1e-4, `Gemm reference, clamp [${lo}, ${hi}]`)
  }
})

t.test('MatMul with a raw batched B (attention-like) matches the reference path', async (t) => {
  const [bh, s, d] = [6, 19, 16]
  const q = random(bh * s * d, 4)
  const kT = random(bh * d * s, 5)
  const want = new Float32Array(bh * s * s)
  native.runOp('MatMul', [f32([2, 3, s, d], q), f32([2, 3, d, s], kT)], [f32([2, 3, s, s], want)], [], [])
  for (const threads of [1, 2]) {
    for (const perBatch of [true, false]) {
      const ws = perBatch ? 8 * gemmWorkspaceBytes(s, s, d, 1, true) : gemmWorkspaceBytes(s, s, d, 1, true)
      const y = new Float32Array(bh * s * s)
      native.runOp('MatMul', [f32([2, 3, s, d], q), f32([2, 3, d, s], kT)], [f32([2, 3, s, s], y), { dtype: U8, dims: [ws], data: new Uint8Array(ws) }], [0], [], threads)
      let diff = 0
      for (let i = 0; i < y.length; i++) diff = Math.max(diff, Math.abs(y[i]! - want[i]!))
      t.ok(diff < 1e-5, `threads ${threads}, ${perBatch ? 'a batch per thread' : 'batches in turn'}: max diff ${diff}`)
    }
  }
})
