// SPDX-License-Identifier: Apache-2.0
// Convolutions whose dilation reaches past the input (DeepLabV3's ASPP head): their dead taps are
// trimmed at plan time (lib/model/ops/conv-taps.ts), the filter cut by the prepack (conv_window, or the
// window of the narrow panels), and the engine matches onnxruntime -- opened from the ONNX file, and as a
// prepared package unconstrained and at its minimum budget.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { concreteGraph, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { compareTensors } from '../helpers/compare.js'
import { makeModel, type ModelSpec } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'
import { tempDir } from '../helpers/budget.js'
import { open, openPackage } from '../../lib/index.js'
import { prepare } from '../../lib/prepare/prepare.js'

const weights = seededWeights(29)
const C = 64

function conv(x: string, w: string, y: string, k: [number, number], d: [number, number], pads: number[]): ModelSpec['nodes'][number] {
  return { op: 'Conv', inputs: [x, w], outputs: [y], name: `conv_${y}`, ints: { kernel_shape: k, pads, dilations: d } }
}

/**
 * x [1, 64, 9, 9] -> 3x3 dilation 12 (a 1x1 once trimmed) = a; 3x5 dilations (4, 9) padded (4, 18): its
 * middle column only = b; 3x3 dilation 2 (all live) = c; y = a + b + c.
 */
function model(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, C, 9, 9] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('wa', [C, C, 3, 3], 0.1), weights('wb', [C, C, 3, 5], 0.1), weights('wc', [C, C, 3, 3], 0.1)],
    nodes: [
      conv('x', 'wa', 'a', [3, 3], [12, 12], [12, 12, 12, 12]),
      conv('x', 'wb', 'b', [3, 5], [4, 9], [4, 18, 4, 18]),
      conv('x', 'wc', 'c', [3, 3], [2, 2], [2, 2, 2, 2]),
      { op: 'Add', inputs: ['a', 'b'], outputs: ['ab'] },
      { op: 'Add', inputs: ['ab', 'c'], outputs: ['y'] },
    ],
  })
}

t.test('dead taps are trimmed from the plan', async (t) => {
  const { inferred } = concreteGraph(model(), [1, C, 9, 9])
  const byName = new Map(inferred.steps.filter((s) => s.node.opType === 'Conv').map((s) => [s.node.name, s.kernel!]))
  const prepackOf = (name: string) => byName.get(name)!.prepack?.[0]
  t.same(prepackOf('conv_a')?.ints, [1, 2, 1, 2], 'dilation 12 on 9x9: the centre tap')
  t.same(prepackOf('conv_b')?.ints.slice(-4), [0, 3, 2, 3], '3x5: its middle column')
  t.notOk(prepackOf('conv_c')?.ints.length === 4, 'dilation 2: nothing trimmed')
})

t.test('the engine and a prepared package match onnxruntime', async (t) => {
  const dir = tempDir(t)
  const path = join(dir, 'dead-taps.onnx')
  writeFileSync(path, model())
  const feeds = { x: seededInput([1, C, 9, 9], 31) }
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const got = await engine.infer(feeds)
    await engine.close()
    const r = compareTensors(got.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
  const report = await prepare(path, join(dir, 'dead-taps.fpk'), { threads: 2 })
  for (const budget of [undefined, report.minimumBudget]) {
    const engine = await openPackage(join(dir, 'dead-taps.fpk'), { threads: 2, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    const { outputs, ops } = await engine.inferProfiled(feeds)
    await engine.close()
    const r = compareTensors(outputs.y!, want.y!, 1e-5, 1e-5)
    const kernels = ops.filter((o) => o.opType === 'Conv').map((o) => o.kernel).join(', ')
    t.ok(r.ok, `package at budget ${budget ?? 'unlimited'} (kernels ${kernels}): max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
})
