// SPDX-License-Identifier: Apache-2.0
// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool (float32) on every ISA this machine runs:
// the row path (native/runtime/pool_run.h) with each ISA's micro-kernels against the obvious N-d
// reference kernels (`generic`: maxpool_f32__ref, avgpool_f32__ref, global_*pool_f32__ref) and against
// the `ref` ISA table. Shapes: 1-, 2- and 3-D; widths {1, 7, 8, 9, 16, 17, prime} and a sweep 1..40
// (tails of the 8- and 4-wide stride-1/2 loops), widths past the 2048-float row buffer (chunked), kernels
// 1..5 with dilation 1..3, strides 1..3, pads 0..2 on either side (windows wholly in the padding
// included), ceil_mode with and without the last-window rule, count_include_pad on and off; 1 thread, and
// 2 threads on a sample of the cases. Inputs are read 4 bytes into their buffers (misaligned); a canary before and after every
// output must stay untouched.
// Tolerances: max and the ISA tables among themselves are exact (same comparisons, sums in the same order);
// averages vs the double-precision reference: |got - want| <= taps * 2^-23 * max|x| (float sums of `taps`
// terms and one scaling); global averages: n * 2^-24 * max|x| over a plane of n elements.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'

type PoolOp = (isa: string, name: string, inputs: NativeTensor[], outputs: NativeTensor[], ints: number[],
  floats: number[], threads?: number) => void
const testing = binding()._testing as unknown as { isas(): string[]; poolOp: PoolOp }
const isas = testing.isas()
const F32 = 1
const CANARY = -12345.5

interface PoolCase {
  readonly planes: readonly [number, number]
  readonly in: readonly number[]
  readonly kernel: readonly number[]
  readonly strides: readonly number[]
  readonly dilations: readonly number[]
  readonly padsBegin: readonly number[]
  readonly padsEnd: readonly number[]
  /** 0 floor, 1 ceil with ONNX's rule (the last window starts inside input or begin padding), 2 floor + 1. */
  readonly ceil: 0 | 1 | 2
}

function outDims(c: PoolCase): number[] {
  return c.in.map((len, i) => {
    const s = c.strides[i]!
    const extent = (c.kernel[i]! - 1) * c.dilations[i]! + 1
    const span = len + c.padsBegin[i]! + c.padsEnd[i]! - extent
    if (span < 0) return 0
    const floor = Math.floor(span / s) + 1
    if (c.ceil !== 1) return floor + c.ceil / 2
    const out = Math.ceil(span / s) + 1
    // ONNX's rule drops a last window starting past the begin padding (never below floor: pads >= kernel).
    return (out - 1) * s >= len + c.padsBegin[i]! ? Math.max(floor, out - 1) : out
  })
}

const count = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1)
const describe = (c: PoolCase) => JSON.stringify({ ...c, out: outDims(c) })

/** Random data in [-1, 1), a view 4 bytes into its buffer. */
function random(n: number, seed: number): Float32Array {
  const rand = seededRandom(seed)
  const a = new Float32Array(n + 1)
  for (let i = 0; i < a.length; i++) a[i] = rand() * 2 - 1
  return a.subarray(1)
}

/** Runs a pool op; the output sits 4 bytes into a buffer with canaries before and after it. */
function run(isa: string, op: string, inDims: number[], x: Float32Array, yDims: number[], ints: number[],
  threads = 1): Float32Array {
  const n = count(yDims)
  const buf = new Float32Array(n + 17).fill(CANARY)
  const y = buf.subarray(1, n + 1)
  testing.poolOp(isa, op, [{ dtype: F32, dims: inDims, data: x }], [{ dtype: F32, dims: yDims, data: y }], ints, [],
    threads)
  if (buf[0] !== CANARY || buf.subarray(n + 1).some((v) => v !== CANARY)) throw new Error(`${isa} ${op} wrote outside Y`)
  return y
}

/** First index where got and want differ by more than tol (exact when tol = 0), or -1. */
function firstMismatch(got: Float32Array, want: Float32Array, tol: number): number {
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i]! - want[i]!) <= tol) && got[i] !== want[i]) return i
  }
  return -1
}

const maxAbs = (x: Float32Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0)

/** Runs one case on every ISA for MaxPool and both AveragePool variants; returns failure messages. */
function checkCase(c: PoolCase, seed: number): string[] {
  const inDims = [...c.planes, ...c.in]
  const yDims = [...c.planes, ...outDims(c)]
  const x = random(count(inDims), seed)
  const spatial = [c.in.length, ...c.kernel, ...c.strides, ...c.dilations, ...c.padsBegin, ...c.padsEnd]
  const taps = count(c.kernel)
  const failures: string[] = []
  const ops: Array<[string, number, number]> = [['MaxPool', 0, 0], ['AveragePool', 0, taps * 2 ** -23 * maxAbs(x)],
    ['AveragePool', 1, taps * 2 ** -23 * maxAbs(x)]]
  for (const [op, extra, tol] of ops) {
    const ints = [...spatial, extra]
    const want = run('generic', op, inDims, x, yDims, ints)
    const refTable = run('ref', op, inDims, x, yDims, ints)
    const what = `${op}${op === 'AveragePool' ? ` count_include_pad=${extra}` : ''} ${describe(c)}`
    for (const isa of isas) {
      const got = isa === 'ref' ? refTable : run(isa, op, inDims, x, yDims, ints)
      let i = firstMismatch(got, want, tol)
      if (i >= 0) failures.push(`${isa} vs generic ${what}: y[${i}] = ${got[i]}, want ${want[i]}`)
      i = firstMismatch(got, refTable, 0)
      if (i >= 0) failures.push(`${isa} vs ref ${what}: y[${i}] = ${got[i]}, want ${refTable[i]}`)
      if (seed % 8 !== 0) continue // threads: a sample (OpenMP start-up dominates these tiny runs)
      i = firstMismatch(run(isa, op, inDims, x, yDims, ints, 2), got, 0)
      if (i >= 0) failures.push(`${isa} 2 threads vs 1 ${what}: y[${i}]`)
    }
  }
  return failures
}

function case2d(h: number, w: number, k: number[], s: number[], pads: number[], ceil: 0 | 1 | 2, d = [1, 1],
  planes: [number, number] = [1, 3]): PoolCase {
  return { planes, in: [h, w], kernel: k, strides: s, dilations: d, padsBegin: pads.slice(0, 2),
    padsEnd: pads.slice(2), ceil }
}

t.test('the row path equals the reference on 2-D windows, strides, pads and ceil modes', async (t) => {
  const kernels = [[1, 1], [2, 2], [3, 3], [1, 3], [3, 1], [5, 5], [2, 3]]
  const strides = [[1, 1], [2, 2], [3, 3], [1, 2], [2, 1]]
  const pads = [[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 2, 0], [2, 2, 2, 2], [1, 0, 0, 1]]
  const widths = [1, 7, 8, 9, 16, 17, 31, 113]
  const heights = [1, 5, 12]
  const failures: string[] = []
  let n = 0
  for (const k of kernels) {
    for (const s of strides) {
      for (const p of pads) {
        for (const ceil of [0, 1, 2] as const) {
          const w = widths[n % widths.length]!
          const h = heights[n % heights.length]!
          const d = n % 4 === 3 ? [2, 3] : [1, 1]
          failures.push(...checkCase(case2d(h, w, k, s, p, ceil, d), 1000 + n))
          n++
        }
      }
    }
  }
  t.same(failures.slice(0, 10), [], `${n} cases`)
})

t.test('the row path equals the reference at every width 1..40 (vector tails) for 3x3 and 2x2, and for the fused 3x3 stride-2 max up to 136', async (t) => {
  const failures: string[] = []
  for (let w = 1; w <= 40; w++) {
    for (const [k, s, p] of [[3, 2, 0], [3, 2, 1], [3, 1, 1], [2, 2, 0], [3, 3, 1]] as const) {
      failures.push(...checkCase(case2d(3 + (w % 4), w, [k, k], [s, s], [p, p, p, p], (w % 2) as 0 | 1), 3000 + w))
    }
  }
  t.same(failures.slice(0, 10), [], 'widths 1..40')
  // the fused 3x3 stride-2 max: 16 outputs per AVX-512 step, so up to four steps and every tail
  for (let w = 41; w <= 136; w += w < 72 ? 1 : 7) {
    failures.push(...checkCase(case2d(3 + (w % 3), w, [3, 3], [2, 2], [w % 2, w % 2, 0, 0], 0), 4000 + w))
  }
  t.same(failures.slice(0, 10), [], 'the fused 3x3 stride-2 max, widths 41..136')
})

t.test('the row path equals the reference in 1-D, 3-D, many planes and rows past the row buffer', async (t) => {
  const cases: PoolCase[] = [
    { planes: [2, 3], in: [37], kernel: [3], strides: [2], dilations: [1], padsBegin: [1], padsEnd: [1], ceil: 1 },
    { planes: [1, 2], in: [19], kernel: [4], strides: [1], dilations: [2], padsBegin: [0], padsEnd: [3], ceil: 0 },
    { planes: [1, 2], in: [5, 6, 17], kernel: [2, 3, 3], strides: [2, 1, 2], dilations: [1, 1, 1],
      padsBegin: [1, 0, 1], padsEnd: [0, 1, 1], ceil: 1 },
    { planes: [2, 1], in: [3, 4, 9], kernel: [3, 2, 2], strides: [1, 2, 1], dilations: [2, 1, 2],
      padsBegin: [2, 1, 0], padsEnd: [2, 0, 1], ceil: 2 },
    case2d(3, 5000, [3, 3], [1, 1], [1, 1, 1, 1], 0),
    case2d(4, 4999, [3, 3], [2, 2], [0, 0, 0, 0], 1, [1, 1], [1, 1]),
    case2d(2, 3000, [1, 9], [1, 3], [0, 4, 0, 4], 0, [1, 3], [1, 1]),
    case2d(7, 11, [3, 3], [2, 2], [1, 1, 1, 1], 0, [1, 1], [4, 17]),
    case2d(3, 1500, [1, 1100], [1, 1], [0, 0, 0, 0], 0, [1, 1], [1, 1]), // extent past the buffer: reference only
  ]
  const failures = cases.flatMap((c, i) => checkCase(c, 500 + i))
  t.same(failures.slice(0, 10), [], `${cases.length} cases`)
})

t.test('global average and max pools equal the reference on every ISA', async (t) => {
  const failures: string[] = []
  for (const size of [1, 7, 8, 9, 31, 32, 33, 100, 1000, 25600]) {
    const inDims = [2, 3, size]
    const x = random(6 * size, size)
    for (const [op, tol] of [['GlobalAveragePool', size * 2 ** -24 * maxAbs(x)], ['GlobalMaxPool', 0]] as const) {
      const want = run('generic', op, inDims, x, [2, 3, 1], [])
      for (const isa of isas) {
        for (const threads of size % 2 === 0 ? [1, 2] : [1]) {
          const got = run(isa, op, inDims, x, [2, 3, 1], [], threads)
          const i = firstMismatch(got, want, tol)
          if (i >= 0) failures.push(`${isa} ${op} size=${size} threads=${threads}: y[${i}] = ${got[i]}, want ${want[i]}`)
        }
      }
    }
  }
  t.same(failures, [])
})

t.test('an empty spatial axis gives an empty output and poolOp rejects unknown ops', async (t) => {
  const c = case2d(0, 5, [1, 1], [1, 1], [0, 0, 0, 0], 0)
  t.same(checkCase(c, 1), [])
  t.throws(() => testing.poolOp('ref', 'LpPool', [], [], [], []), /not a pool or Resize op/)
  t.throws(() => testing.poolOp('sse9', 'MaxPool', [], [], [], []), RangeError)
})
