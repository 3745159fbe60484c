// SPDX-License-Identifier: Apache-2.0
// Concat in place (lib/plan/memory/concat-in-place.ts): which Concats run without a copy, and that graphs
// with them compute what onnxruntime computes, through the plain engine and a memory-budgeted package
// (both place the blocks in the Concat's buffer and run no op for it), and that the budgeted program
// plans the blocks as that buffer (fewer live bytes than copying).
import t from 'tap'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { open, openPackage, prepare } from '../../lib/index.js'
import { hostTensor } from '../../lib/model/values.js'
import { concatsInPlace } from '../../lib/plan/memory/concat-in-place.js'
import { liveBytesPerStep } from '../../lib/plan/memory/live-bytes.js'
import { packageRunsAtMinimum, tempDir } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { concreteGraph, convNode, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(23)
const conv = (x: string, w: string, y: string, k: number) => convNode(x, w, undefined, y, k)

/**
 * A fire module and three Concats that must copy, batch `n`:
 * x [n, 8, 9, 9] -> 1x1 8->4 + Relu = s; e1 = 1x1 4->16 (s) + Relu; e3 = 3x3 4->16 (s) + Relu
 * f = Concat(e1, e3) on channels          (in place when n = 1)
 * g = Concat(f, x) on channels            (f is itself a Concat in place; x a graph input: copies)
 * h = 1x1 40->8 (g); r = Concat(h, h2) on axis 2 with h2 = Neg(h) (h read twice: copies)
 * y = Concat(r, k) on axis 3, k constant  (a constant block: copies)
 */
function fireModel(n: number): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [n, 8, 9, 9] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('ws', [4, 8, 1, 1], 0.4), weights('w1', [16, 4, 1, 1], 0.4), weights('w3', [16, 4, 3, 3], 0.2), weights('wh', [8, 40, 1, 1], 0.2), weights('k', [n, 8, 18, 2], 1)],
    nodes: [
      conv('x', 'ws', 's0', 1), { op: 'Relu', inputs: ['s0'], outputs: ['s'] },
      conv('s', 'w1', 'a1', 1), { op: 'Relu', inputs: ['a1'], outputs: ['e1'] },
      conv('s', 'w3', 'a3', 3), { op: 'Relu', inputs: ['a3'], outputs: ['e3'] },
      { op: 'Concat', inputs: ['e1', 'e3'], outputs: ['f'], int: { axis: 1 } },
      { op: 'Concat', inputs: ['f', 'x'], outputs: ['g'], int: { axis: 1 } },
      conv('g', 'wh', 'h', 1), { op: 'Neg', inputs: ['h'], outputs: ['h2'] },
      { op: 'Concat', inputs: ['h', 'h2'], outputs: ['r'], int: { axis: 2 } },
      { op: 'Concat', inputs: ['r', 'k'], outputs: ['y'], int: { axis: 3 } },
    ],
  })
}

function inPlaceOf(n: number) {
  const { graph, inferred } = concreteGraph(fireModel(n), [n, 8, 9, 9])
  const c = concatsInPlace(graph, inferred, (v) => v.tensor === undefined && hostTensor(v) === undefined)
  return { blocks: [...c.blocks].map(([name, b]) => `${name}@${b.output}+${b.byteOffset}`), steps: [...c.steps].map((k) => inferred.steps[k]!.node.outputs[0]) }
}

t.test('concatsInPlace places only exclusive activation blocks of single-image Concats', async (t) => {
  const one = inPlaceOf(1)
  t.same(one.steps, ['f'], 'the fire Concat only')
  t.same(one.blocks, ['e1@f+0', `e3@f+${16 * 81 * 4}`], 'e1 then e3, each its bytes after the last')
  t.same(inPlaceOf(2).steps, [], 'two images: a block per image would not be contiguous')
})

const input = (n: number) => seededInput([n, 8, 9, 9], 3)

t.test('graphs with Concats in place match onnxruntime, plain and in a budgeted package', async (t) => {
  for (const n of [1, 2]) {
    const path = tempFile(`fire${n}.onnx`, fireModel(n))
    const feeds = { x: input(n) }
    const want = await runOrt(path, feeds)
    for (const threads of [1, 2]) {
      const engine = await open(path, { threads })
      const got = await engine.infer(feeds)
      const again = await engine.infer(feeds) // the same buffers, written again
      await engine.close()
      for (const [label, y] of [['first run', got.y!], ['second run', again.y!]] as const) {
        const c = compareTensors(y, want.y!, 1e-5, 1e-5)
        t.ok(c.ok, `batch ${n}, ${threads} threads, ${label}: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
      }
    }
  }
  const path = tempFile('fire-package.onnx', fireModel(1))
  const feeds = { x: input(1) }
  const want = await runOrt(path, feeds)
  const { runs } = await packageRunsAtMinimum(t, path, feeds)
  const c = compareTensors(runs[1]!.outputs.y!, want.y!, 1e-5, 1e-5)
  t.ok(c.ok, `package at its minimum budget: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  t.equal(runs[0]!.stats.ops, runs[1]!.stats.ops, 'as many ops at both budgets')
})

t.test('a budgeted program runs no op for a Concat in place and plans its blocks as its buffer', async (t) => {
  const { graph, inferred } = concreteGraph(fireModel(1), [1, 8, 9, 9])
  const isConstant = (name: string): boolean => {
    const v = inferred.values.get(name)
    return v === undefined || v.tensor !== undefined || hostTensor(v) !== undefined
  }
  const live = liveBytesPerStep(graph, inferred, isConstant, concatsInPlace(graph, inferred, (v) => v.tensor === undefined && hostTensor(v) === undefined))
  const fire = inferred.steps.findIndex((s) => s.node.outputs[0] === 'f')
  // at the fire Concat: f (32 x 81 floats) and the graph input x (8 x 81), s being read last by the
  // expands before it; copying would add e1 and e3 (another 32 x 81)
  t.equal(live[fire], 4 * 81 * (32 + 8), 'live bytes at the Concat count its blocks once, as its output')
  const engine = await open(tempFile('fire-profile.onnx', fireModel(1)), { threads: 1 })
  const plain = (await engine.inferProfiled({ x: input(1) })).ops.map((o) => o.node)
  await engine.close()
  const dir = tempDir(t)
  const model = join(dir, 'fire.onnx')
  copyFileSync(tempFile('fire-budget.onnx', fireModel(1)), model)
  const report = await prepare(model, join(dir, 'fire.fpk'), { threads: 1 })
  const budgeted = await openPackage(join(dir, 'fire.fpk'), { threads: 1, memoryBudget: report.minimumBudget })
  const ops = (await budgeted.inferProfiled({ x: input(1) })).ops.map((o) => o.node)
  await budgeted.close()
  const fireNode = inferred.steps[fire]!.node.name
  t.notOk(ops.includes(fireNode), `the budgeted program has no op for the fire Concat (${fireNode})`)
  t.same(ops, plain, 'and the same ops as the plain engine')
})
