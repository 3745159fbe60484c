// SPDX-License-Identifier: Apache-2.0
// Grouped convolutions (native grouped_conv): RegNet's 3x3 of 8 and 16 channels per group at strides 1
// and 2, ResNeXt's 4 per group with a fused Relu and a residual Add, ShuffleNet v1's grouped 1x1 -- take
// the grouped algorithm with its packed filter, and the engine matches onnxruntime, also inside a
// memory budget that streams the weights.
import t from 'tap'
import { convAlgoCode } from '../../lib/model/ops/conv-cost.js'
import { concreteGraph, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { compareTensors } from '../helpers/compare.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'
import { open, openPackage } from '../../lib/index.js'
import { prepare } from '../../lib/prepare/prepare.js'
import { tempDir } from '../helpers/budget.js'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'

const weights = seededWeights(71)

function conv(x: string, w: string, b: string, y: string, k: number, stride: number, group: number): ModelSpec['nodes'][number] {
  const pad = (k - 1) / 2
  return {
    op: 'Conv', inputs: [x, w, b], outputs: [y], name: `conv_${y}`,
    ints: { kernel_shape: [k, k], pads: [pad, pad, pad, pad], strides: [stride, stride] },
    int: { group },
  }
}

/**
 * x [1, 32, 29, 29] -> 3x3 s2 g2 (16 per group) + Relu = a [32, 15, 15] -> 3x3 s1 g4 (8 per group),
 * + a (residual) = b -> 3x3 s1 g8 (4 per group) to 48 channels (6 per group) = c -> 1x1 g3 = y [24, 15, 15]
 */
function model(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 32, 29, 29] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w1', [32, 16, 3, 3]), weights('b1', [32]), weights('w2', [32, 8, 3, 3]), weights('b2', [32]),
      weights('w3', [48, 4, 3, 3]), weights('b3', [48]), weights('w4', [24, 16, 1, 1]), weights('b4', [24]),
    ],
    nodes: [
      conv('x', 'w1', 'b1', 'a0', 3, 2, 2), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'w2', 'b2', 'b0', 3, 1, 4), { op: 'Add', inputs: ['b0', 'a'], outputs: ['b'] },
      conv('b', 'w3', 'b3', 'c', 3, 1, 8),
      conv('c', 'w4', 'b4', 'y', 1, 1, 3),
    ],
  })
}

t.test('grouped convolutions take the grouped algorithm', async (t) => {
  const { inferred } = concreteGraph(model(), [1, 32, 29, 29])
  const convs = inferred.steps.filter((s) => s.node.opType === 'Conv')
  t.equal(convs.length, 4)
  for (const s of convs) {
    const call = s.kernel!
    t.equal(call.ints[call.ints.length - 3], convAlgoCode.grouped, `${s.node.name}: grouped`)
    t.equal(call.prepack?.[0]?.transform, 'grouped_filter', `${s.node.name}: its filter packed by group`)
  }
})

t.test('the engine matches onnxruntime', async (t) => {
  const path = tempFile('grouped-conv.onnx', model())
  const feeds = { x: seededInput([1, 32, 29, 29], 19) }
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const got = await engine.infer(feeds)
    await engine.close()
    t.same(got.y!.dims, [1, 24, 15, 15])
    const r = compareTensors(got.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
})

/** x [1, 128, 14, 14] -> 3x3 g4 (32 per group, 147 KiB of weights) + Relu = a -> 3x3 s2 g8 = y [128, 7, 7]: weights a package stores. */
function largeModel(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 128, 14, 14] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w1', [128, 32, 3, 3], 0.1), weights('b1', [128]), weights('w2', [128, 16, 3, 3], 0.1), weights('b2', [128])],
    nodes: [
      conv('x', 'w1', 'b1', 'a0', 3, 1, 4), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'w2', 'b2', 'y', 3, 2, 8),
    ],
  })
}

t.test('a prepared package stores the packed filters and runs them, unconstrained and at its minimum budget', async (t) => {
  const dir = tempDir(t)
  const path = join(dir, 'grouped.onnx')
  writeFileSync(path, largeModel())
  const feeds = { x: seededInput([1, 128, 14, 14], 23) }
  const want = await runOrt(path, feeds)
  const report = await prepare(path, join(dir, 'grouped.fpk'), { threads: 2 })
  for (const budget of [undefined, report.minimumBudget]) {
    const engine = await openPackage(join(dir, 'grouped.fpk'), { threads: 2, ...(budget === undefined ? {} : { memoryBudget: budget }) })
    const { outputs, ops } = await engine.inferProfiled(feeds)
    await engine.close()
    const kernels = ops.filter((o) => o.opType === 'Conv').map((o) => o.kernel)
    if (budget === undefined) t.same(kernels, ['grouped', 'grouped'], 'unconstrained: both layers read their packed filters')
    const r = compareTensors(outputs.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `budget ${budget ?? 'unlimited'} (kernels ${kernels.join(', ')}): max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
})
