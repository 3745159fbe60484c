// SPDX-License-Identifier: Apache-2.0
// Depthwise convolutions other than 3x3 (native depthwise_kxk): the edge-model shapes a user brings --
// MnasNet's and EfficientNet's 5x5 at strides 1 and 2, ConvNeXt's 7x7, DeepLabV3's dilated 3x3, with a
// fused Relu and a residual Add -- take the depthwise algorithm, and the engine matches onnxruntime.
import t from 'tap'
import { convAlgoCode } from '../../lib/model/ops/conv-cost.js'
import { concreteGraph, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { compareTensors } from '../helpers/compare.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'
import { open } from '../../lib/index.js'

const weights = seededWeights(53)
const C = 24

function dw(x: string, w: string, b: string, y: string, k: number, stride: number, dilation: number): ModelSpec['nodes'][number] {
  const pad = ((k - 1) * dilation) / 2
  return {
    op: 'Conv', inputs: [x, w, b], outputs: [y], name: `conv_${y}`,
    ints: { kernel_shape: [k, k], pads: [pad, pad, pad, pad], strides: [stride, stride], dilations: [dilation, dilation] },
    int: { group: C },
  }
}

/**
 * x [1, C, 30, 30] -> 5x5 s1 + Relu = a -> 5x5 s2 = b [15x15] -> 7x7 s1, + b (residual) = c
 * -> 3x3 dilation 2 = d -> 5x5 dilation 2, stride 2 = y [8x8]
 */
function model(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, C, 30, 30] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w1', [C, 1, 5, 5]), weights('b1', [C]), weights('w2', [C, 1, 5, 5]), weights('b2', [C]),
      weights('w3', [C, 1, 7, 7], 0.15), weights('b3', [C]), weights('w4', [C, 1, 3, 3]), weights('b4', [C]),
      weights('w5', [C, 1, 5, 5]), weights('b5', [C]),
    ],
    nodes: [
      dw('x', 'w1', 'b1', 'a0', 5, 1, 1), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      dw('a', 'w2', 'b2', 'b', 5, 2, 1),
      dw('b', 'w3', 'b3', 'c0', 7, 1, 1), { op: 'Add', inputs: ['c0', 'b'], outputs: ['c'] },
      dw('c', 'w4', 'b4', 'd', 3, 1, 2),
      dw('d', 'w5', 'b5', 'y', 5, 2, 2),
    ],
  })
}

t.test('5x5, 7x7 and dilated depthwise convolutions take the depthwise algorithm', async (t) => {
  const { inferred } = concreteGraph(model(), [1, C, 30, 30])
  const convs = inferred.steps.filter((s) => s.node.opType === 'Conv')
  t.equal(convs.length, 5)
  for (const s of convs) {
    const ints = s.kernel!.ints
    t.equal(ints[ints.length - 3], convAlgoCode.depthwise, `${s.node.name}: depthwise`)
  }
})

t.test('the engine matches onnxruntime', async (t) => {
  const path = tempFile('depthwise-kxk.onnx', model())
  const feeds = { x: seededInput([1, C, 30, 30], 17) }
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const got = await engine.infer(feeds)
    await engine.close()
    t.same(got.y!.dims, [1, C, 8, 8])
    const r = compareTensors(got.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
})
