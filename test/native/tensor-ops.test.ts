// SPDX-License-Identifier: Apache-2.0
// The tensor op group: native data movement and reductions against scalar JS references (one and
// several threads, sizes past the serial cutoff), index checks, and symbolic shape folding in TS.
import t, { type Test } from 'tap'
import type { Dim, Node, ValueInfo } from '../../lib/model/ir.js'
import type { OpResult } from '../../lib/model/ops/op-def.js'
import { tensorOps } from '../../lib/model/ops/tensor.js'
import { binding, type NativeTensor } from '../../lib/native/binding.js'

const b = binding()
const f32 = 1
const i32 = 6
const i64 = 7

function numel(dims: readonly number[]): number {
  return dims.reduce((p, d) => p * d, 1)
}

function seq(n: number, seed = 1): Float32Array {
  const a = new Float32Array(n)
  let s = seed
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648
    a[i] = ((s >> 8) % 2001) / 100 - 10
  }
  return a
}

function tensor(dims: number[], data: ArrayBufferView, dtype = f32): NativeTensor {
  return { dtype, dims, data }
}

function run(
  op: string,
  ins: Array<NativeTensor | null>,
  outDims: number[],
  ints: number[],
  floats: number[] = [],
  threads = 1,
  outDtype = f32,
): Float32Array {
  const out = new Float32Array(numel(outDims))
  b.runOp(op, ins, [tensor(outDims, out, outDtype)], ints, floats, threads)
  return out
}

/** Element of a row-major tensor at coord. */
function at(data: ArrayLike<number>, dims: readonly number[], coord: readonly number[]): number {
  let i = 0
  dims.forEach((d, k) => (i = i * d + coord[k]!))
  return data[i]!
}

/** Compares element by element (t.same on 100k-element arrays is slow) and reports the first mismatch. */
function sameArray(t: Test, got: ArrayLike<number>, want: readonly number[], what = 'values agree'): void {
  if (got.length !== want.length) return void t.fail(`${what}: length ${got.length} vs ${want.length}`)
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) return void t.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`)
  }
  t.pass(what)
}

function coords(dims: readonly number[]): number[][] {
  const out: number[][] = []
  const c = dims.map(() => 0)
  for (let i = 0; i < numel(dims); i++) {
    out.push(c.slice())
    for (let k = dims.length - 1; k >= 0; k--) {
      if (++c[k]! < dims[k]!) break
      c[k] = 0
    }
  }
  return out
}

for (const threads of [1, 4]) {
  t.test(`Transpose matches the reference on ${threads} thread(s)`, async (t) => {
    const dims = [6, 40, 30, 12]
    const x = seq(numel(dims))
    const perm = [2, 0, 3, 1]
    const outDims = perm.map((p) => dims[p]!)
    const got = run('Transpose', [tensor(dims, x)], outDims, perm, [], threads)
    const want = coords(outDims).map((c) => at(x, dims, perm.map((_, k) => c[perm.indexOf(k)]!)))
    sameArray(t, got, want)
  })

  t.test(`Slice with negative steps matches the reference on ${threads} thread(s)`, async (t) => {
    const dims = [20, 64, 50]
    const x = seq(numel(dims))
    // axis 0: 19, 17, ..., 1 (10); axis 1: all; axis 2: 48, 45, ..., 0 (17)
    const starts = [19, 0, 48]
    const steps = [-2, 1, -3]
    const outDims = [10, 64, 17]
    const got = run('Slice', [tensor(dims, x)], outDims, [...starts, ...steps], [], threads)
    const want = coords(outDims).map((c) => at(x, dims, c.map((v, k) => starts[k]! + v * steps[k]!)))
    sameArray(t, got, want)
  })

  t.test(`Tile and Expand match the reference on ${threads} thread(s)`, async (t) => {
    const dims = [3, 1, 50]
    const x = seq(numel(dims))
    const tiled = [6, 4, 150]
    const got = run('Tile', [tensor(dims, x)], tiled, [2, 4, 3], [], threads)
    sameArray(t, got, coords(tiled).map((c) => at(x, dims, c.map((v, k) => v % dims[k]!))))
    const wide = [8, 3, 100, 50]
    const e = run('Expand', [tensor(dims, x)], wide, [], [], threads)
    sameArray(t, e, coords(wide).map((c) => at(x, dims, [c[1]!, 0, c[3]!])))
  })

  t.test(`Concat and Split round-trip on ${threads} thread(s)`, async (t) => {
    const parts = [[30, 5, 70], [30, 0, 70], [30, 11, 70]]
    const xs = parts.map((d, i) => seq(numel(d), i + 3))
    const whole = run('Concat', parts.map((d, i) => tensor(d, xs[i]!)), [30, 16, 70], [1], [], threads)
    const back = parts.map((d) => new Float32Array(numel(d)))
    b.runOp('Split', [tensor([30, 16, 70], whole)], parts.map((d, i) => tensor(d, back[i]!)), [1], [], threads)
    back.forEach((p, i) => sameArray(t, p, Array.from(xs[i]!), `part ${i}`))
  })

  t.test(`Reduce over non-adjacent axes matches the reference on ${threads} thread(s)`, async (t) => {
    const dims = [4, 30, 5, 60]
    const x = seq(numel(dims))
    const flags = [1, 0, 1, 0]
    const outDims = [30, 60]
    const sum = run('Reduce', [tensor(dims, x)], outDims, [0, ...flags], [], threads)
    const max = run('Reduce', [tensor(dims, x)], [1, 30, 1, 60], [2, ...flags], [], threads)
    const lse = run('Reduce', [tensor(dims, x)], outDims, [8, ...flags], [], threads)
    for (const [i, [c1, c3]] of coords(outDims).entries()) {
      const vals: number[] = []
      for (let a = 0; a < 4; a++) for (let c = 0; c < 5; c++) vals.push(at(x, dims, [a, c1!, c, c3!]))
      const s = vals.reduce((p, v) => p + v, 0)
      const m = Math.max(...vals)
      const l = Math.log(vals.reduce((p, v) => p + Math.exp(v - m), 0)) + m
      if (Math.abs(sum[i]! - s) > 1e-3 || max[i] !== Math.fround(m) || Math.abs(lse[i]! - l) > 1e-4) {
        t.fail(`output ${i}: sum ${sum[i]} vs ${s}, max ${max[i]} vs ${m}, lse ${lse[i]} vs ${l}`)
        return
      }
    }
    t.pass('sum, max and log-sum-exp agree')
  })

  t.test(`Pad reflect, edge and wrap match numpy on ${threads} thread(s)`, async (t) => {
    const x = new Float32Array([1, 2, 3, 4, 5, 6])
    const pads = [1, 2, 0, 3] // begin [1, 2], end [0, 3] on dims [2, 3] -> [3, 8]
    const reflect = run('Pad', [tensor([2, 3], x)], [3, 8], [1, ...pads], [], threads)
    t.same(Array.from(reflect), [6, 5, 4, 5, 6, 5, 4, 5, 3, 2, 1, 2, 3, 2, 1, 2, 6, 5, 4, 5, 6, 5, 4, 5])
    const edge = run('Pad', [tensor([2, 3], x)], [3, 8], [2, ...pads], [], threads)
    t.same(Array.from(edge), [1, 1, 1, 2, 3, 3, 3, 3, 1, 1, 1, 2, 3, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6, 6])
    const wrap = run('Pad', [tensor([2, 3], x)], [3, 8], [3, ...pads], [], threads)
    t.same(Array.from(wrap), [5, 6, 4, 5, 6, 4, 5, 6, 2, 3, 1, 2, 3, 1, 2, 3, 5, 6, 4, 5, 6, 4, 5, 6])
    const constant = run('Pad', [tensor([2, 3], x)], [2, 2], [0, 0, -1, 0, 0], [7.5], threads)
    t.same(Array.from(constant), [2, 3, 5, 6], 'negative pads crop')
  })
}

t.test('Gather checks indices and accepts negative ones', async (t) => {
  const x = new Float32Array([10, 11, 12, 13, 14, 15])
  const got = run('Gather', [tensor([3, 2], x), tensor([2], new BigInt64Array([-1n, 0n]), i64)], [3, 2], [1])
  t.same(Array.from(got), [11, 10, 13, 12, 15, 14])
  for (const bad of [3, -4]) {
    const idx = tensor([1], new Int32Array([bad]), i32)
    t.throws(() => run('Gather', [tensor([3, 2], x), idx], [1, 2], [0]), /index out of range/, `index ${bad}`)
  }
})

t.test('GatherElements, GatherND and OneHot follow the ONNX examples', async (t) => {
  const geIdx = tensor([2, 2], new BigInt64Array([0n, 0n, 1n, 0n]), i64)
  const ge = run('GatherElements', [tensor([2, 2], new Float32Array([1, 2, 3, 4])), geIdx], [2, 2], [1])
  t.same(Array.from(ge), [1, 1, 4, 3])
  const data = new Float32Array([0, 1, 2, 3, 4, 5, 6, 7])
  const nd = run('GatherND', [tensor([2, 2, 2], data), tensor([2, 1], new BigInt64Array([1n, 0n]), i64)], [2, 2], [1])
  t.same(Array.from(nd), [2, 3, 4, 5], 'batch_dims = 1')
  const badIdx = tensor([1, 2], new BigInt64Array([0n, 2n]), i64)
  t.throws(() => run('GatherND', [tensor([2, 2, 2], data), badIdx], [1, 2], [0]), /index out of range/)
  const ohIdx = tensor([3], new BigInt64Array([0n, -1n, 7n]), i64)
  const oh = run('OneHot', [ohIdx, tensor([2], new Float32Array([0, 5]))], [3, 4], [1, 4])
  t.same(Array.from(oh), [5, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0], 'negative index wraps, out of range is all off')
})

t.test('ArgReduce, CumSum and Trilu read run-time scalars and options', async (t) => {
  const x = new Float32Array([3, 1, 3, 2, 2, 0])
  const arg = (isMin: number, last: number): number[] => {
    const out = new BigInt64Array(2)
    b.runOp('ArgReduce', [tensor([2, 3], x)], [tensor([2], out, i64)], [1, isMin, last], [])
    return Array.from(out, Number)
  }
  t.same(arg(0, 0), [0, 0])
  t.same(arg(0, 1), [2, 1])
  t.same(arg(1, 1), [1, 2])
  const cs = run('CumSum', [tensor([2, 3], x), tensor([], new Int32Array([-1]), i32)], [2, 3], [0, 1, 1])
  t.same(Array.from(cs), [4, 3, 0, 2, 0, 0], 'axis from the tensor, exclusive and reverse')
  const tri = run('Trilu', [tensor([2, 3], x), tensor([], new BigInt64Array([1n]), i64)], [2, 3], [0, 0])
  t.same(Array.from(tri), [3, 1, 0, 2, 2, 0], 'lower with k = 1 from the tensor')
})

t.test('ops reject outputs that contradict their attributes', async (t) => {
  const x = seq(24)
  t.throws(() => run('Transpose', [tensor([2, 3, 4], x)], [2, 2, 3], [0, 0, 1]), /permutation/)
  t.throws(() => run('Reduce', [tensor([2, 3, 4], x)], [2, 3], [0, 1, 0, 0]), /output dims/)
  t.throws(() => run('Slice', [tensor([2, 3, 4], x)], [2, 3, 3], [0, 0, 2, 1, 1, 1]), /outside the input/)
  t.throws(() => run('Tile', [tensor([2, 3, 4], x)], [2, 3, 9], [1, 1, 2]), /expected 4 x 2/)
})

// --- shape inference in TypeScript --------------------------------------------------------------

const defs = new Map(tensorOps.map((d) => [d.opType, d]))

function infer(
  opType: string,
  inputs: Array<ValueInfo | undefined>,
  attrs: Record<string, number | number[]> = {},
  opset = 17,
  outputs = 1,
): OpResult {
  const node: Node = {
    name: `${opType}_0`,
    opType,
    domain: '',
    inputs: inputs.map((_, i) => `in${i}`),
    outputs: Array.from({ length: outputs }, (_, i) => `out${i}`),
    attrs: new Map(Object.entries(attrs)),
  }
  return defs.get(opType)!.infer({ node, opset, inputs })
}

const ints = (values: Dim[]): ValueInfo => ({ dtype: 'int64', dims: [values.length], values })

t.test('a PyTorch shape subgraph folds on symbolic dims', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: ['batch', 'seq', 768] }
  const shape = infer('Shape', [x]).outputs[0]!
  t.same(shape.values, ['batch', 'seq', 768])
  const b0 = infer('Gather', [shape, { dtype: 'int64', dims: [], values: [0] }]).outputs[0]!
  t.same([b0.dims, b0.values], [[], ['batch']])
  const u = infer('Unsqueeze', [b0, ints([0])]).outputs[0]!
  t.same([u.dims, u.values], [[1], ['batch']])
  const cat = infer('Concat', [u, ints([-1]), ints([12, 64])], { axis: 0 }).outputs[0]!
  t.same(cat.values, ['batch', -1, 12, 64])
  const r = infer('Reshape', [x, cat])
  t.equal(r.aliasOf, 0)
  t.same(r.outputs[0]!.dims, ['batch', 'seq', 12, 64], '-1 cancels the symbols it can')
  const flat = infer('Reshape', [x, ints([0, -1])])
  t.same(flat.outputs[0]!.dims, ['batch', 'seq*768'])
  const sl = infer('Slice', [shape, ints([1]), ints([9223372036854775807])]).outputs[0]!
  t.same(sl.values, ['seq', 768])
  const prod = infer('ReduceProd', [sl], { keepdims: 0 }).outputs[0]!
  t.same(prod.values, ['seq*768'])
})

t.test('symbolic slices and reductions keep readable dims', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: ['batch', 'seq', 64] }
  const s = infer('Slice', [x, ints([1, -8]), ints([9223372036854775807, 9223372036854775807]), ints([1, 2])])
  t.same(s.outputs[0]!.dims, ['batch', 'seq-1', 8])
  const m = infer('ReduceMean', [x], { axes: [-1], keepdims: 1 })
  t.same(m.outputs[0]!.dims, ['batch', 'seq', 1])
  const tr = infer('Transpose', [x], { perm: [0, 2, 1] })
  t.same(tr.outputs[0]!.dims, ['batch', 64, 'seq'])
  const sp = infer('Split', [x, ints([16, 48])], { axis: -1 }, 17, 2)
  t.same(sp.outputs.map((o) => o.dims), [['batch', 'seq', 16], ['batch', 'seq', 48]])
  const scalar = (v: Dim): ValueInfo => ({ dtype: 'int64', dims: [], values: [v] })
  const r = infer('Range', [scalar(0), scalar('seq'), scalar(1)])
  t.same(r.outputs[0]!.dims, ['seq'])
})

t.test('concrete kernels encode normalized attributes', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: [20, 10, 5] }
  const s = infer('Slice', [x, ints([-1, 0]), ints([-9223372036854775807, 3]), ints([0, 2]), ints([-3, 1])])
  t.same(s.outputs[0]!.dims, [7, 10, 3])
  t.same(s.kernel!(), { op: 'Slice', inputs: [0], ints: [19, 0, 0, -3, 1, 1], floats: [] })
  const r = infer('ReduceSum', [x, ints([])], { keepdims: 0 })
  t.same(r.outputs[0]!.dims, [])
  t.same(r.kernel!().ints, [0, 1, 1, 1])
  const noop = infer('ReduceSum', [x, ints([])], { noop_with_empty_axes: 1 })
  t.equal(noop.aliasOf, 0)
  t.throws(() => infer('Reshape', [x, ints([3, -1])]), /cannot reshape/)
  t.throws(() => infer('Gather', [x, { dtype: 'int64', dims: [1], values: [20] }]), /out of range/)
  t.throws(() => infer('Tile', [x, { dtype: 'int64', dims: [3] }]), { code: 'ERR_FLEXPIPE_UNSUPPORTED_OPERATOR' })
})

t.test('older opsets take their arguments as attributes', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: [4, 1, 6] }
  const s = infer('Slice', [x], { starts: [1, -4], ends: [3, 1000], axes: [0, 2] }, 9)
  t.same(s.outputs[0]!.dims, [2, 1, 4])
  t.same(s.kernel!().ints, [1, 0, 2, 1, 1, 1])
  const p = infer('Pad', [x], { pads: [0, 0, 1, 0, 0, 2], value: 0.5 }, 10)
  t.same(p.outputs[0]!.dims, [4, 1, 9])
  t.same(p.kernel!(), { op: 'Pad', inputs: [0, -1], ints: [0, 0, 0, 1, 0, 0, 2], floats: [0.5] })
  t.same(infer('Squeeze', [x], { axes: [1] }, 11).outputs[0]!.dims, [4, 6])
  t.same(infer('Unsqueeze', [x], { axes: [-1, 0] }, 11).outputs[0]!.dims, [1, 4, 1, 6, 1])
  const sp = infer('Split', [x], { axis: 2, split: [1, 5] }, 11, 2)
  t.same(sp.outputs.map((o) => o.dims), [[4, 1, 1], [4, 1, 5]])
  t.same(infer('ReduceSum', [x], { axes: [0, 2], keepdims: 0 }, 11).outputs[0]!.dims, [1])
  t.same(infer('ReduceMean', [x, ints([1])], { keepdims: 0 }, 18).outputs[0]!.dims, [4, 6])
})

t.test('integer reductions: sums and products wrap around, results computed in double saturate (found by native/fuzz/program_fuzz.cc)', async (t) => {
  const reduce = (kind: number, data: BigInt64Array): bigint => {
    const y = new BigInt64Array(1)
    b.runOp('Reduce', [{ dtype: i64, dims: [data.length], data }], [{ dtype: i64, dims: [1], data: y }], [kind, 1], [])
    return y[0]!
  }
  const max = 2n ** 63n - 1n
  const min = -(2n ** 63n)
  t.equal(reduce(7, BigInt64Array.from([0n, 0n])), min, 'LogSum of zeros: log(0) = -inf saturates to the lowest int64')
  t.equal(reduce(8, BigInt64Array.from([0n])), 0n, 'LogSumExp of one 0 is log(1) = 0')
  t.equal(reduce(0, BigInt64Array.from([max, 1n])), min, 'ReduceSum wraps past the largest int64')
  t.equal(reduce(4, BigInt64Array.from([2n ** 62n, 4n])), 0n, 'ReduceProd wraps (2^64 = 0)')
  t.equal(reduce(5, BigInt64Array.from([min])), min, 'ReduceL1 of the lowest int64 wraps to itself')
})
