// SPDX-License-Identifier: Apache-2.0
// Weight (column) slices of Gemm and MatMul with a packed B: slices [n0, n1) packed by gemm_pack_b with
// ints [transB, n0, n1] write only their columns of one output, and together equal the unsliced op.
// Equality is bit for bit: every Y[i, j] is one micro-kernel's dot product over the same kc blocks of
// K whichever column tile j falls in (partial tiles run the same kernel into a tile buffer), and bias,
// beta*C and the clamp are per element. CI also runs this file with FLEXPIPE_ISA=ref.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { gemmWorkspaceBytes } from '../../lib/model/ops/nn-matmul.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'

const native = binding()
const F32 = 1
const U8 = 2
const [m, k, n] = [37, 70, 50]
const sentinel = 1234.5

const f32 = (dims: number[], data?: Float32Array): NativeTensor => ({
  dtype: F32,
  dims,
  data: data ?? new Float32Array(dims.reduce((p, d) => p * d, 1)),
})
const random = (count: number, seed: number): Float32Array => {
  const rand = seededRandom(seed)
  return Float32Array.from({ length: count }, () => rand() * 2 - 1)
}
const workspace = (): NativeTensor => {
  const bytes = gemmWorkspaceBytes(m, n, k, 8, false)
  return { dtype: U8, dims: [bytes], data: new Uint8Array(bytes) }
}

const partitions = [
  [[0, 16], [16, 40], [40, 50]], // widths 16, 24, 10: not all multiples of NR (8 ref, 16 avx2, 12 neon)
  [[0, 7], [7, 33], [33, 50]], // uneven, none panel-aligned
  [[45, 50], [0, 1], [1, 45]], // out of order, a one-column slice
] as const

const a = random(m * k, 1)
const w = random(k * n, 2) // [K, N]
const wT = new Float32Array(n * k) // [N, K]
for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) wT[j * k + p] = w[p * n + j]!
const bias = random(n, 3)
const cFull = random(m * n, 4)

function pack(trans: boolean, n0: number, n1: number): NativeTensor {
  const packed = native.prepack('gemm_pack_b', trans ? f32([n, k], wT) : f32([k, n], w), [trans ? 1 : 0, n0, n1])
  return f32(packed.dims, new Float32Array(packed.data))
}

interface Case {
  name: string
  /** Runs the op on y with weight columns [n0, n1) (undefined: the unsliced op). */
  run(y: Float32Array, threads: number, slice?: readonly [number, number]): void
}

const cases: Case[] = [
  {
    name: 'MatMul',
    run: (y, threads, slice) =>
      native.runOp('MatMul', [f32([m, k], a), pack(false, slice?.[0] ?? 0, slice?.[1] ?? n)], [f32([m, n], y), workspace()], slice ? [1, ...slice] : [1], [], threads),
  },
  {
    name: 'MatMul with a fused clamp [-0.5, 0.5]',
    run: (y, threads, slice) =>
      native.runOp('MatMul', [f32([1, m, k], a), pack(false, slice?.[0] ?? 0, slice?.[1] ?? n)], [f32([1, m, n], y), workspace()], slice ? [1, ...slice] : [1], [-0.5, 0.5], threads),
  },
  {
    name: 'Gemm transB with bias and ReLU',
    run: (y, threads, slice) =>
      native.runOp('Gemm', [f32([m, k], a), pack(true, slice?.[0] ?? 0, slice?.[1] ?? n), f32([n], bias)], [f32([m, n], y), workspace()], slice ? [0, 1, 1, ...slice] : [0, 1, 1], [1, 1, 0, Infinity], threads),
  },
  {
    name: 'Gemm with alpha 0.5 and a full C times beta 0.25',
    run: (y, threads, slice) =>
      native.runOp('Gemm', [f32([m, k], a), pack(false, slice?.[0] ?? 0, slice?.[1] ?? n), f32([m, n], cFull)], [f32([m, n], y), workspace()], slice ? [0, 0, 1, ...slice] : [0, 0, 1], [0.5, 0.25], threads),
  },
]

const isa = native.info().isa
for (const c of cases) {
  t.test(`${c.name}: column slices write only their columns and together equal the unsliced op (isa ${isa})`, async (t) => {
    for (const threads of [1, 2]) {
      const whole = new Float32Array(m * n)
      c.run(whole, threads)
      for (const partition of partitions) {
        const y = new Float32Array(m * n).fill(sentinel)
        const done = new Set<number>()
        for (const slice of partition) {
          c.run(y, threads, slice)
          for (let j = slice[0]; j < slice[1]; j++) done.add(j)
          let untouched = true
          let written = true
          for (let i = 0; i < m; i++) {
            for (let j = 0; j < n; j++) {
              const v = y[i * n + j]!
              if (done.has(j)) written &&= v === whole[i * n + j]
              else untouched &&= v === sentinel
            }
          }
          const label = `threads ${threads}, slice [${slice}] of ${JSON.stringify(partition)}`
          t.ok(untouched, `${label}: columns outside the slices so far are untouched`)
          t.ok(written, `${label}: written columns equal the unsliced op bit for bit`)
        }
      }
    }
  })
}

t.test('slice ints are checked', async (t) => {
  const y = f32([m, n])
  const pb = pack(false, 16, 40)
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), pb], [y, workspace()], [1, 16], []), /both n0 and n1/)
  // the packed dims record the panel count, not n0/n1: a slice of another width is caught
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), pb], [y, workspace()], [1, 0, 50], []), /packed B .* columns \[0, 50\)/)
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), pb], [y, workspace()], [1, 40, 16], []), /0 <= n0 <= n1 <= N = 50/)
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), pb], [y, workspace()], [1, 16, 51], []), /0 <= n0 <= n1 <= N = 50/)
  t.throws(() => native.runOp('MatMul', [f32([m, k], a), f32([k, n], w)], [y, workspace()], [0, 16, 40], []), /needs a packed B/)
  t.throws(() => native.runOp('Gemm', [f32([m, k], a), pb], [y, workspace()], [0, 0, 1, 0, 50], [1, 1]), /packed B/)
  t.throws(() => native.prepack('gemm_pack_b', f32([k, n], w), [0, 30, 20]), /column range/)
  const empty = new Float32Array(m * n).fill(sentinel)
  native.runOp('MatMul', [f32([m, k], a), pack(false, 20, 20)], [f32([m, n], empty), workspace()], [1, 20, 20], [])
  t.ok(empty.every((v) => v === sentinel), 'an empty slice writes nothing')
})
