// SPDX-License-Identifier: Apache-2.0
// An engine keeps one plan per shape bucket and, for shapes planned alone, the maxPlans most recently
// used; it reuses the previous call's plan when the shapes repeat: every call, in any order of shapes,
// computes its own output, and the caches stay bounded.
import t from 'tap'
import { open } from '../../lib/index.js'
import { makeModel, tempFile } from '../helpers/make-model.js'

const w = [0.5, -1, 2, 0.25, -0.75, 1.5, 1, -2] // [4, 2]
const path = tempFile(
  'plan-cache.onnx',
  makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: ['n', 4] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [{ name: 'w', dims: [4, 2], floats: w }],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'w'], outputs: ['h'] },
      { op: 'Relu', inputs: ['h'], outputs: ['y'] },
    ],
  }),
)

function input(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n * 4 }, (_, i) => Math.sin(seed * 7.1 + i * 0.9) * 3)
}

function expected(x: Float32Array, n: number): number[] {
  const y: number[] = []
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < 2; c++) {
      let s = 0
      for (let k = 0; k < 4; k++) s += x[r * 4 + k]! * w[k * 2 + c]!
      y.push(Math.max(0, s))
    }
  }
  return y
}

for (const maxPlans of [1, 2]) {
  t.test(`shapes repeated, alternated and evicted give each call its own output (maxPlans ${maxPlans})`, async (t) => {
    const engine = await open(path as `${string}.onnx`, { threads: 1, maxPlans })
    t.teardown(() => engine.close())
    const rows = [3, 3, 3, 1, 3, 2, 1, 1, 3, 2, 2, 4, 3, 3, 1]
    for (const [call, n] of rows.entries()) {
      const x = input(n, call)
      const { y } = await engine.infer({ x: { dtype: 'float32', dims: [n, 4], data: x } })
      t.same(y!.dims, [n, 2], `call ${call}: dims [${n}, 2]`)
      const want = expected(x, n)
      const worst = Math.max(...Array.from(y!.data as Float32Array, (v, i) => Math.abs(v - want[i]!)))
      t.ok(worst < 1e-5, `call ${call} (n=${n}): output within 1e-5 of x·w (worst ${worst})`)
      // Shapes planned alone (outside a bucket's template) are the LRU of maxPlans; bucket plans stay.
      const s = engine.stats()
      t.ok(s.plans - s.buckets.buckets <= maxPlans, `call ${call}: ${s.plans - s.buckets.buckets} shapes planned alone are kept`)
      t.ok(s.buckets.buckets <= 3, `call ${call}: ${s.buckets.buckets} buckets (n = 1, 2, 3..4)`)
    }
    // A call refused for its shape leaves the previous plan in use for the next call of that shape.
    await t.rejects(engine.infer({ x: { dtype: 'float32', dims: [3, 5], data: new Float32Array(15) } }), { code: 'ERR_FLEXPIPE_SHAPE' })
    const x = input(1, 99)
    const { y } = await engine.infer({ x: { dtype: 'float32', dims: [1, 4], data: x } })
    t.same(Array.from(y!.data as Float32Array, (v) => Math.round(v * 1e4)), expected(x, 1).map((v) => Math.round(v * 1e4)), 'the call after the refused one')
  })
}
