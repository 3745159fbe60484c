// SPDX-License-Identifier: Apache-2.0
// NonZero and TopK (native/kernels/select/) against scalar JS references: every dtype they take, NaN,
// -0, ties, k = 0 and k = the whole axis, inner axes, outputs with room past the actual size (the plan's
// upper bound: the kernel writes packed at the actual size and that size as its last output), and the
// errors for too little room or a k outside the axis.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'

const b = binding()
const code = { float32: 1, uint8: 2, int8: 3, int16: 5, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11 } as const

function nonzeroReference(values: ArrayLike<number | bigint>, dims: readonly number[]): number[][] {
  const hits: number[] = []
  for (let i = 0; i < values.length; i++) if (values[i] !== 0 && values[i] !== 0n) hits.push(i) // NaN !== 0, -0 === 0
  return dims.map((_, r) =>
    hits.map((flat) => {
      const after = dims.slice(r + 1).reduce((p, d) => p * d, 1)
      return Math.floor(flat / after) % dims[r]!
    }),
  )
}

function runNonzero(x: NativeTensor, room: number): { rows: number[][]; count: number } {
  const rank = x.dims.length
  const y = new BigInt64Array(rank * room).fill(-7n)
  const count = new BigInt64Array(1)
  b.runOp('NonZero', [x], [{ dtype: code.int64, dims: [rank, room], data: y }, { dtype: code.int64, dims: [], data: count }], [], [])
  const n = Number(count[0])
  return { rows: Array.from({ length: rank }, (_, r) => Array.from(y.subarray(r * n, (r + 1) * n), Number)), count: n }
}

t.test('NonZero: the coordinates of the nonzero elements, packed at their count, for every dtype', async (t) => {
  const rand = seededRandom(11)
  const dims = [3, 5, 4]
  const n = 60
  const pick = (): number => (rand() < 0.4 ? 0 : Math.floor(rand() * 9) - 4)
  const cases: Array<[string, ArrayBufferView & ArrayLike<number | bigint>, number]> = [
    ['float32', Float32Array.from({ length: n }, pick), code.float32],
    ['float64', Float64Array.from({ length: n }, pick), code.float64],
    ['int32', Int32Array.from({ length: n }, pick), code.int32],
    ['int64', BigInt64Array.from({ length: n }, () => BigInt(pick())), code.int64],
    ['int16', Int16Array.from({ length: n }, pick), code.int16],
    ['int8', Int8Array.from({ length: n }, pick), code.int8],
    ['uint8', Uint8Array.from({ length: n }, () => Math.abs(pick())), code.uint8],
    ['bool', Uint8Array.from({ length: n }, () => (pick() === 0 ? 0 : 1)), code.bool],
  ]
  for (const [name, data, dtype] of cases) {
    const want = nonzeroReference(data, dims)
    const got = runNonzero({ dtype, dims, data }, n)
    t.equal(got.count, want[0]!.length, `${name}: count ${want[0]!.length}`)
    t.same(got.rows, want, `${name}: coordinates equal the reference`)
  }
})

t.test('NonZero: NaN is nonzero, -0 is zero, float16 by its bits; none, all, and a 1-D input', async (t) => {
  const x = Float32Array.from([0, -0, Number.NaN, 1e-30, -2, 0])
  t.same(runNonzero({ dtype: code.float32, dims: [6], data: x }, 6).rows, [[2, 3, 4]], 'float32 with NaN and -0')
  const half = Uint16Array.from([0x0000, 0x8000, 0x3c00, 0x7e00, 0x0001]) // 0, -0, 1, NaN, the smallest subnormal
  t.same(runNonzero({ dtype: code.float16, dims: [5], data: half }, 5).rows, [[2, 3, 4]], 'float16')
  t.same(runNonzero({ dtype: code.float32, dims: [2, 3], data: new Float32Array(6) }, 6), { rows: [[], []], count: 0 }, 'all zero: count 0')
  t.same(runNonzero({ dtype: code.int32, dims: [2, 2], data: Int32Array.from([1, 2, 3, 4]) }, 4).rows, [[0, 0, 1, 1], [0, 1, 0, 1]], 'all nonzero')
})

t.test('NonZero refuses an output with too little room and a wrong rank', async (t) => {
  const x = { dtype: code.int32, dims: [4], data: Int32Array.from([1, 1, 1, 0]) }
  t.throws(() => runNonzero(x, 2), { message: /3 nonzero elements, room for 2/ })
  t.throws(() => b.runOp('NonZero', [x], [{ dtype: code.int64, dims: [2, 4], data: new BigInt64Array(8) }, { dtype: code.int64, dims: [], data: new BigInt64Array(1) }], [], []), { message: /output must be \[rank, n\]/ })
})

/** TopK by sorting each line: best first, the lower index on ties, NaN above every number. */
function topKReference(x: ArrayLike<number | bigint>, dims: readonly number[], axis: number, k: number, largest: boolean): { values: Array<number | bigint>; indices: number[] } {
  const n = dims[axis]!
  const inner = dims.slice(axis + 1).reduce((p, d) => p * d, 1)
  const outer = dims.slice(0, axis).reduce((p, d) => p * d, 1)
  const isNaN = (u: number | bigint): boolean => typeof u === 'number' && Number.isNaN(u)
  const values: Array<number | bigint> = new Array(outer * k * inner)
  const indices: number[] = new Array(outer * k * inner)
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const idx = Array.from({ length: n }, (_, j) => j)
      const v = (j: number): number | bigint => x[o * n * inner + j * inner + i]!
      idx.sort((a, c) => {
        const [va, vc] = [v(a), v(c)]
        // ascending order, NaN above every number; largest reverses it; ties: the lower index first
        const up = isNaN(va) || isNaN(vc) ? Number(isNaN(va)) - Number(isNaN(vc)) : va > vc ? 1 : va < vc ? -1 : 0
        return (largest ? -up : up) || a - c
      })
      for (let j = 0; j < k; j++) {
        values[o * k * inner + j * inner + i] = v(idx[j]!)
        indices[o * k * inner + j * inner + i] = idx[j]!
      }
    }
  }
  return { values, indices }
}

function runTopK(x: NativeTensor, axis: number, k: number, largest: boolean, options: { room?: number; kInput?: boolean } = {}): { values: Array<number | bigint>; indices: number[]; count?: number } {
  const n = x.dims[axis]!
  const room = options.room ?? k
  const outDims = x.dims.map((d, i) => (i === axis ? room : d))
  const size = outDims.reduce((p, d) => p * d, 1)
  const Values = (x.data as unknown as { constructor: new (n: number) => ArrayBufferView & ArrayLike<number | bigint> }).constructor
  const values = new Values(size)
  const indices = new BigInt64Array(size)
  const count = new BigInt64Array(1)
  const outputs: NativeTensor[] = [
    { dtype: x.dtype, dims: outDims, data: values },
    { dtype: code.int64, dims: outDims, data: indices },
    ...(options.kInput === true ? [{ dtype: code.int64, dims: [], data: count }] : []),
    { dtype: code.uint8, dims: [8 * Math.max(1, n)], data: new Uint8Array(8 * Math.max(1, n)) },
  ]
  const kTensor = { dtype: code.int64, dims: [1], data: BigInt64Array.from([BigInt(k)]) }
  b.runOp('TopK', [x, options.kInput === true ? kTensor : null], outputs, [axis, largest ? 1 : 0, 1, options.kInput === true ? -1 : k, options.kInput === true ? 1 : 0], [])
  // packed as the dims with k on the axis
  const packed = x.dims.map((d, i) => (i === axis ? k : d)).reduce((p, d) => p * d, 1)
  return {
    values: Array.from((values as ArrayLike<number | bigint>) as ArrayLike<number>).slice(0, packed),
    indices: Array.from(indices.subarray(0, packed), Number),
    ...(options.kInput === true ? { count: Number(count[0]) } : {}),
  }
}

t.test('TopK: the k best of every line along any axis, for each dtype, largest and smallest', async (t) => {
  const rand = seededRandom(5)
  const dims = [3, 7, 5]
  const n = 105
  // few distinct values: ties on every line
  const pick = (): number => Math.floor(rand() * 6) - 3
  const cases: Array<[string, ArrayBufferView & ArrayLike<number | bigint>, number]> = [
    ['float32', Float32Array.from({ length: n }, () => pick() + (rand() < 0.5 ? 0 : 0.25)), code.float32],
    ['float64', Float64Array.from({ length: n }, pick), code.float64],
    ['int32', Int32Array.from({ length: n }, pick), code.int32],
    ['int64', BigInt64Array.from({ length: n }, () => BigInt(pick())), code.int64],
  ]
  for (const [name, data, dtype] of cases) {
    const differ: string[] = []
    for (const axis of [0, 1, 2]) {
      for (const k of [0, 1, 2, dims[axis]!]) {
        for (const largest of [true, false]) {
          const want = topKReference(data, dims, axis, k, largest)
          const got = runTopK({ dtype, dims, data }, axis, k, largest)
          if (JSON.stringify(got.indices) !== JSON.stringify(want.indices) || got.values.some((v, i) => v !== want.values[i])) differ.push(`axis ${axis} k ${k} ${largest ? 'largest' : 'smallest'}`)
        }
      }
    }
    t.same(differ, [], `${name}: every axis, k in {0, 1, 2, all}, largest and smallest equal the reference`)
  }
})

t.test('TopK: NaN ranks above every number; k from an input is packed into room for more and written as the count', async (t) => {
  const x = Float32Array.from([1, Number.NaN, 3, 3, -1, Number.NaN])
  const largest = runTopK({ dtype: code.float32, dims: [6], data: x }, 0, 3, true)
  t.same(largest.indices, [1, 5, 2], 'largest: the NaNs first (lower index first), then 3')
  const smallest = runTopK({ dtype: code.float32, dims: [6], data: x }, 0, 5, false)
  t.same(smallest.indices, [4, 0, 2, 3, 1], 'smallest: NaN last')
  const rand = seededRandom(3)
  const data = Float32Array.from({ length: 24 }, () => rand())
  const got = runTopK({ dtype: code.float32, dims: [2, 12], data }, 1, 4, true, { room: 12, kInput: true })
  const want = topKReference(data, [2, 12], 1, 4, true)
  t.equal(got.count, 4, 'the count output holds k')
  t.same(got.indices, want.indices, 'the lines are packed at k = 4, not at the room of 12')
})

t.test('TopK refuses a k outside the axis, too little room, and too small a scratch', async (t) => {
  const x = { dtype: code.float32, dims: [4], data: Float32Array.from([1, 2, 3, 4]) }
  t.throws(() => runTopK(x, 0, 5, true, { room: 5 }), { message: /k = 5 is outside 0..4/ })
  t.throws(() => runTopK(x, 0, 3, true, { room: 2, kInput: true }), { message: /room for 2 along the axis, k = 3/ })
  t.throws(() => b.runOp('TopK', [x, null], [{ dtype: code.float32, dims: [2], data: new Float32Array(2) }, { dtype: code.int64, dims: [2], data: new BigInt64Array(2) }, { dtype: code.uint8, dims: [8], data: new Uint8Array(8) }], [0, 1, 1, 2, 0], []), { message: /scratch too small/ })
  t.throws(() => b.runOp('TopK', [{ dtype: code.uint8, dims: [4], data: new Uint8Array(4) }, null], [{ dtype: code.uint8, dims: [2], data: new Uint8Array(2) }, { dtype: code.int64, dims: [2], data: new BigInt64Array(2) }, { dtype: code.uint8, dims: [32], data: new Uint8Array(32) }], [0, 1, 1, 2, 0], []), { message: /dtype uint8 is not supported/ })
})
