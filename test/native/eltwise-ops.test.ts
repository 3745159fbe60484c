// SPDX-License-Identifier: Apache-2.0
// The elementwise native ops (broadcast walk, integer edge cases, casts, clip, errors) and the
// plan-time folding of their TypeScript definitions on symbolic shapes.
import t from 'tap'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { eltwiseOps } from '../../lib/model/ops/eltwise.js'
import type { OpContext, OpDef } from '../../lib/model/ops/op-def.js'
import type { AttrValue, ValueInfo } from '../../lib/model/ir.js'
import { BinaryCode, CompareCode, UnaryCode } from '../../lib/model/ops/eltwise-codes.js'

const b = binding()
const F32 = 1
const U8 = 2
const I8 = 3
const I32 = 6
const I64 = 7
const BOOL = 9
const F16 = 10
const F64 = 11

function tensor(dtype: number, dims: number[], data: ArrayBufferView): NativeTensor {
  return { dtype, dims, data }
}

const count = (dims: number[]): number => dims.reduce((p, d) => p * d, 1)

/** A seeded sequence of small floats (xorshift), so failures reproduce. */
function floats(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    out[i] = ((s >>> 0) % 2001) / 100 - 10
  }
  return out
}

/** Element index of `dims` (broadcast to `out`) for flat output index i. */
function bcastIndex(i: number, dims: number[], out: number[]): number {
  let off = 0
  let stride = 1
  for (let d = out.length - 1; d >= 0; d--) {
    const size = out[d] as number
    const k = i % size
    i = Math.floor(i / size)
    const j = d - (out.length - dims.length)
    if (j >= 0) {
      const dim = dims[j] as number
      if (dim !== 1) off += k * stride
      stride *= dim
    }
  }
  return off
}

t.test('Binary add broadcasts like numpy on every thread split', async (t) => {
  const cases: Array<[number[], number[], number[]]> = [
    [
      [2, 3, 4],
      [3, 1],
      [2, 3, 4],
    ],
    [
      [1, 4, 1, 6],
      [3, 1, 5, 6],
      [3, 4, 5, 6],
    ],
    [[], [5], [5]],
    [
      [7, 1],
      [1, 9],
      [7, 9],
    ],
    [
      [64, 1, 1100],
      [1, 3, 1],
      [64, 3, 1100],
    ], // > one grain, chunks start mid-row
  ]
  for (const [da, db, dy] of cases) {
    const a = floats(count(da), 7)
    const bb = floats(count(db), 11)
    for (const threads of [1, 3]) {
      const y = new Float32Array(count(dy))
      b.runOp(
        'Binary',
        [tensor(F32, da, a), tensor(F32, db, bb)],
        [tensor(F32, dy, y)],
        [BinaryCode.add, 0],
        [],
        threads,
      )
      let bad = -1
      for (let i = 0; i < y.length && bad < 0; i++) {
        const want = Math.fround((a[bcastIndex(i, da, dy)] as number) + (bb[bcastIndex(i, db, dy)] as number))
        if (y[i] !== want) bad = i
      }
      t.equal(bad, -1, `[${da}] + [${db}] -> [${dy}] threads=${threads}`)
    }
  }
})

t.test('integer Div truncates, and division by zero or overflow does not trap', async (t) => {
  const a = new Int32Array([7, -7, 7, -7, 5, -2147483648])
  const d = new Int32Array([2, 2, -2, -2, 0, -1])
  const y = new Int32Array(6)
  b.runOp('Binary', [tensor(I32, [6], a), tensor(I32, [6], d)], [tensor(I32, [6], y)], [BinaryCode.div, 0], [])
  t.same(Array.from(y), [3, -3, -3, 3, 0, -2147483648])
})

t.test('Mod follows the divisor sign, fmod the dividend sign', async (t) => {
  const a = new BigInt64Array([-4n, 7n, 5n, -5n])
  const d = new BigInt64Array([3n, -3n, 0n, 3n])
  const y = new BigInt64Array(4)
  b.runOp('Binary', [tensor(I64, [4], a), tensor(I64, [4], d)], [tensor(I64, [4], y)], [BinaryCode.mod, 0], [])
  t.same(Array.from(y), [2n, -2n, 0n, 1n])
  b.runOp('Binary', [tensor(I64, [4], a), tensor(I64, [4], d)], [tensor(I64, [4], y)], [BinaryCode.fmod, 0], [])
  t.same(Array.from(y), [-1n, 1n, 0n, -2n])
  const fy = new Float32Array(2)
  const fa = new Float32Array([-4.5, 7.5])
  const fd = new Float32Array([2, -2])
  b.runOp('Binary', [tensor(F32, [2], fa), tensor(F32, [2], fd)], [tensor(F32, [2], fy)], [BinaryCode.fmod, 0], [])
  t.same(Array.from(fy), [-0.5, 1.5])
})

t.test('variadic Binary folds Sum and Mean over broadcast inputs', async (t) => {
  const x0 = new Float32Array([1, 2, 3])
  const x1 = new Float32Array([10])
  const x2 = new Float32Array([100, 200, 300, 400, 500, 600])
  const y = new Float32Array(6)
  const ins = [tensor(F32, [3], x0), tensor(F32, [1], x1), tensor(F32, [2, 3], x2)]
  b.runOp('Binary', ins, [tensor(F32, [2, 3], y)], [BinaryCode.add, 0], [])
  t.same(Array.from(y), [111, 212, 313, 411, 512, 613])
  b.runOp('Binary', ins, [tensor(F32, [2, 3], y)], [BinaryCode.add, 1], [])
  t.same(Array.from(y), [37, 212 / 3, 313 / 3, 137, 512 / 3, 613 / 3].map(Math.fround))
})

t.test('Where selects with three-way broadcasting', async (t) => {
  const c = new Uint8Array([1, 0])
  const x = new BigInt64Array([1n, 2n, 3n])
  const y = new BigInt64Array([-1n])
  const out = new BigInt64Array(6)
  b.runOp(
    'Where',
    [tensor(BOOL, [2, 1], c), tensor(I64, [3], x), tensor(I64, [], y)],
    [tensor(I64, [2, 3], out)],
    [],
    [],
  )
  t.same(Array.from(out), [1n, 2n, 3n, -1n, -1n, -1n])
})

t.test('Cast truncates and saturates floats to integers, rounds to float16, tests != 0 for bool', async (t) => {
  const x = new Float32Array([1.9, -1.9, 300, -300, NaN, 0.5])
  const i8 = new Int8Array(6)
  b.runOp('Cast', [tensor(F32, [6], x)], [tensor(I8, [6], i8)], [I8], [])
  t.same(Array.from(i8), [1, -1, 127, -128, 0, 0])
  const bools = new Uint8Array(6)
  b.runOp('Cast', [tensor(F32, [6], x)], [tensor(BOOL, [6], bools)], [BOOL], [])
  t.same(Array.from(bools), [1, 1, 1, 1, 1, 1])
  const h = new Uint16Array(4)
  const hx = new Float32Array([1, 65504, 1e6, 5.960464477539063e-8])
  b.runOp('Cast', [tensor(F32, [4], hx)], [tensor(F16, [4], h)], [F16], [])
  t.same(Array.from(h), [0x3c00, 0x7bff, 0x7c00, 0x0001])
  const back = new Float64Array(4)
  b.runOp('Cast', [tensor(F16, [4], h)], [tensor(F64, [4], back)], [F64], [])
  t.same(Array.from(back), [1, 65504, Infinity, 5.960464477539063e-8])
  t.throws(() => b.runOp('Cast', [tensor(F32, [6], x)], [tensor(I8, [6], i8)], [U8], []), /failed to run Cast/)
})

t.test('Clip takes bounds from tensors or attributes, per dtype', async (t) => {
  const x = new Int8Array([-100, -5, 0, 5, 100])
  const y = new Int8Array(5)
  b.runOp(
    'Clip',
    [tensor(I8, [5], x), null, tensor(I8, [], new Int8Array([6]))],
    [tensor(I8, [5], y)],
    [1, 0, -3, 0],
    [],
  )
  t.same(Array.from(y), [-3, -3, 0, 5, 6])
  const fx = new Float32Array([-2, NaN, 2])
  const fy = new Float32Array(3)
  b.runOp('Clip', [tensor(F32, [3], fx)], [tensor(F32, [3], fy)], [1, 1, 0, 0], [-1, 1])
  t.same(Array.from(fy), [-1, NaN, 1])
  t.throws(
    () =>
      b.runOp('Clip', [tensor(F32, [3], fx), tensor(F32, [2], new Float32Array(2))], [tensor(F32, [3], fy)], [], []),
    /min must have one element/,
  )
})

t.test('Pow mixes dtypes and keeps the base dtype', async (t) => {
  const x = new BigInt64Array([1n, 2n, 3n])
  const e = new Float32Array([4, 5, 6])
  const z = new BigInt64Array(3)
  b.runOp('Pow', [tensor(I64, [3], x), tensor(F32, [3], e)], [tensor(I64, [3], z)], [], [])
  t.same(Array.from(z), [1n, 32n, 729n])
  const fz = new Float32Array(3)
  b.runOp(
    'Pow',
    [tensor(F32, [3], new Float32Array([2, 3, 4])), tensor(I32, [], new Int32Array([2]))],
    [tensor(F32, [3], fz)],
    [],
    [],
  )
  t.same(Array.from(fz), [4, 9, 16])
})

t.test('Compare, IsInf and Not write 0/1 bytes', async (t) => {
  const a = new Float32Array([1, 2, 3])
  const c = new Float32Array([2])
  const y = new Uint8Array(3)
  b.runOp('Compare', [tensor(F32, [3], a), tensor(F32, [1], c)], [tensor(BOOL, [3], y)], [CompareCode.lessEqual], [])
  t.same(Array.from(y), [1, 1, 0])
  const inf = new Float64Array([Infinity, -Infinity, NaN, 1])
  const r = new Uint8Array(4)
  b.runOp('IsInf', [tensor(F64, [4], inf)], [tensor(BOOL, [4], r)], [0, 1], [])
  t.same(Array.from(r), [1, 0, 0, 0])
  b.runOp('Unary', [tensor(BOOL, [3], new Uint8Array([0, 1, 0]))], [tensor(BOOL, [3], y)], [UnaryCode.logicalNot], [])
  t.same(Array.from(y), [1, 0, 1])
})

t.test('elementwise ops reject what they cannot run', async (t) => {
  const x = new Float32Array(6)
  const y = new Float32Array(6)
  t.throws(
    () =>
      b.runOp(
        'Binary',
        [tensor(F32, [3], x.subarray(0, 3)), tensor(F32, [3], y.subarray(0, 3))],
        [tensor(F32, [2, 3], y)],
        [0],
        [],
      ),
    /output dims are not the broadcast/,
  )
  t.throws(
    () =>
      b.runOp(
        'Binary',
        [tensor(F32, [2, 3], x), tensor(F32, [3, 2], y)],
        [tensor(F32, [2, 3], new Float32Array(6))],
        [0],
        [],
      ),
    { code: 'ERR_FLEXPIPE_SHAPE_MISMATCH' },
  )
  t.throws(
    () =>
      b.runOp(
        'Unary',
        [tensor(I32, [6], new Int32Array(6))],
        [tensor(I32, [6], new Int32Array(6))],
        [UnaryCode.exp],
        [],
      ),
    /not defined for int32/,
  )
  t.throws(
    () => b.runOp('Binary', [tensor(F32, [6], x)], [tensor(F32, [6], y)], [BinaryCode.shl], []),
    /not defined for float32/,
  )
  t.throws(
    () => b.runOp('Unary', [tensor(F32, [6], x)], [tensor(F32, [5], new Float32Array(5))], [UnaryCode.relu], []),
    {
      code: 'ERR_FLEXPIPE_SHAPE_MISMATCH',
    },
  )
  t.throws(
    () =>
      b.runOp(
        'Dropout',
        [tensor(F32, [6], x), null, tensor(BOOL, [], new Uint8Array([1]))],
        [tensor(F32, [6], y)],
        [],
        [0.5],
      ),
    /training mode is not supported/,
  )
})

// ---- plan-time folding (TypeScript) ----

function def(opType: string): OpDef {
  const d = eltwiseOps.find((o) => o.opType === opType)
  if (d === undefined) throw new Error(`no ${opType}`)
  return d
}

function ctx(opType: string, inputs: ValueInfo[], attrs: Record<string, AttrValue> = {}, opset = 17): OpContext {
  return {
    node: {
      name: 'n',
      opType,
      domain: '',
      inputs: inputs.map((_, i) => `i${i}`),
      outputs: ['o'],
      attrs: new Map(Object.entries(attrs)),
    },
    opset,
    inputs,
  }
}

t.test('shape arithmetic folds with symbolic dims', async (t) => {
  const shape: ValueInfo = { dtype: 'int64', dims: [4], values: ['batch', 3, 'h', 'w'] }
  const add = def('Add').infer(ctx('Add', [shape, { dtype: 'int64', dims: [], values: [1] }]))
  t.same(add.outputs[0]?.values, ['batch+1', 4, 'h+1', 'w+1'])
  const mul = def('Mul').infer(ctx('Mul', [shape, { dtype: 'int64', dims: [4], values: [1, 2, 1, 1] }]))
  t.same(mul.outputs[0]?.values, ['batch', 6, 'h', 'w'])
  const div = def('Div').infer(
    ctx('Div', [
      { dtype: 'int64', dims: [2], values: ['h', -7] },
      { dtype: 'int64', dims: [], values: [2] },
    ]),
  )
  t.same(div.outputs[0]?.values, ['h/2', -3])
  const eq = def('Equal').infer(ctx('Equal', [shape, { dtype: 'int64', dims: [], values: [-1] }]))
  t.same(eq.outputs[0], { dtype: 'bool', dims: [4], values: [0, 0, 0, 0] })
  const where = def('Where').infer(
    ctx('Where', [eq.outputs[0] as ValueInfo, { dtype: 'int64', dims: [], values: [1] }, shape]),
  )
  t.same(where.outputs[0]?.values, ['batch', 3, 'h', 'w'])
  const cast = def('Cast').infer(ctx('Cast', [shape], { to: 6 }))
  t.same(cast.outputs[0], { dtype: 'int32', dims: [4], values: ['batch', 3, 'h', 'w'] })
  const unknown = def('Equal').infer(ctx('Equal', [shape, { dtype: 'int64', dims: [], values: [3] }]))
  t.equal(unknown.outputs[0]?.values, undefined, 'batch == 3 is not known')
})

t.test('float folding rounds to float32 and symbolic output dims still broadcast', async (t) => {
  const r = def('Div').infer(
    ctx('Div', [
      { dtype: 'float32', dims: [], values: [1] },
      { dtype: 'float32', dims: [], values: [3] },
    ]),
  )
  t.same(r.outputs[0]?.values, [Math.fround(1 / 3)])
  const s = def('Add').infer(
    ctx('Add', [
      { dtype: 'float32', dims: ['batch', 1, 8] },
      { dtype: 'float32', dims: [4, 1] },
    ]),
  )
  t.same(s.outputs[0], { dtype: 'float32', dims: ['batch', 4, 8] })
  t.same(s.kernel?.(), { op: 'Binary', inputs: [0, 1], ints: [BinaryCode.add, 0], floats: [] })
  t.throws(
    () =>
      def('Add').infer(
        ctx('Add', [
          { dtype: 'float32', dims: [2] },
          { dtype: 'int64', dims: [2] },
        ]),
      ),
    {
      code: 'ERR_FLEXPIPE_MODEL_FORMAT',
    },
  )
})

t.test('Clip encodes known bounds as attributes and unknown ones as inputs', async (t) => {
  const x: ValueInfo = { dtype: 'float32', dims: [3] }
  const old = def('Clip').infer(ctx('Clip', [x], { min: -1 }, 6))
  t.same(old.kernel?.(), { op: 'Clip', inputs: [0, -1, -1], ints: [1, 0, 0, 0], floats: [-1, 0] })
  const known = def('Clip').infer(
    ctx('Clip', [x, { dtype: 'float32', dims: [], values: [0] }, { dtype: 'float32', dims: [] }]),
  )
  t.same(known.kernel?.(), { op: 'Clip', inputs: [0, -1, 2], ints: [1, 0, 0, 0], floats: [0, 0] })
})
