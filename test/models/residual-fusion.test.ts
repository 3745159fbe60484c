// SPDX-License-Identifier: Apache-2.0
// Conv + residual Add (+ Relu) fusion (lib/model/fuse-residual.ts): which pairs fuse, and that fused
// graphs compute what onnxruntime computes on the unfused one, through every conv algorithm the residual
// reaches (1x1 GEMM, im2col + GEMM, Winograd, depthwise, a stem by rows), in the plain engine and in a
// memory-budgeted package whose slicing cuts a fused layer into channel ranges.
import t from 'tap'
import { open } from '../../lib/index.js'
import { fusedClamp } from '../../lib/model/fuse-activations.js'
import { fuseResidualAdds, fusedResidualAttr } from '../../lib/model/fuse-residual.js'
import { inferGraph } from '../../lib/model/infer-graph.js'
import type { Graph, ValueInfo } from '../../lib/model/ir.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { foldNative } from '../../lib/runtime/fold-native.js'
import { packageRunsAtMinimum } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { convNode, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(77)
const conv = convNode

/**
 * C = 128 channels (weights of 64 KiB and more are streamed and sliced by a budgeted package):
 * x [1, 3, 16, 16] -> stem 3x3 (by rows) 3->C + Relu = a
 * block 1: a -> 1x1 C->C (gemm1x1) -> + a -> Relu = b
 * block 2: b -> 3x3 C->C (Winograd) -> + b (Add(b, conv): the residual first) -> Relu = c
 * block 3: c -> depthwise 3x3 -> + c (no Relu) = d
 * block 4: e = 3x3 conv(d) + a [1, C, 1, 1] constant (a broadcasting Add: must not fuse)
 * block 5: g = 3x3 conv(e) + f, f = Neg(e) computed after the conv (must not fuse)
 */
const C = 128

function residualModel(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 3, 16, 16] }],
    outputs: [{ name: 'g', dtype: 'float32' }],
    initializers: [
      weights('w0', [C, 3, 3, 3]), weights('b0', [C]),
      weights('w1', [C, C, 1, 1], 0.1), weights('b1', [C]),
      weights('w2', [C, C, 3, 3], 0.03), weights('b2', [C]),
      weights('w3', [C, 1, 3, 3]), weights('b3', [C]),
      weights('w4', [C, C, 3, 3], 0.03), weights('k4', [1, C, 1, 1]),
      weights('w5', [C, C, 3, 3], 0.03),
    ],
    nodes: [
      conv('x', 'w0', 'b0', 'a0', 3), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'w1', 'b1', 'h1', 1), { op: 'Add', inputs: ['h1', 'a'], outputs: ['s1'] }, { op: 'Relu', inputs: ['s1'], outputs: ['b'] },
      conv('b', 'w2', 'b2', 'h2', 3), { op: 'Add', inputs: ['b', 'h2'], outputs: ['s2'] }, { op: 'Relu', inputs: ['s2'], outputs: ['c'] },
      conv('c', 'w3', 'b3', 'h3', 3, { group: C }), { op: 'Add', inputs: ['h3', 'c'], outputs: ['d'] },
      conv('d', 'w4', undefined, 'h4', 3), { op: 'Add', inputs: ['h4', 'k4'], outputs: ['e'] },
      conv('e', 'w5', undefined, 'h5', 3), { op: 'Neg', inputs: ['e'], outputs: ['f'] }, { op: 'Add', inputs: ['h5', 'f'], outputs: ['g'] },
    ],
  })
}

const input = () => seededInput([1, 3, 16, 16], 5)

t.test('fuseResidualAdds fuses Conv -> Add of a same-shaped earlier tensor, and only that', async (t) => {
  const g = parseOnnx(residualModel(), '.')
  const inputs = new Map<string, ValueInfo>([['x', { dtype: 'float32', dims: [1, 3, 16, 16] }]])
  const f = fuseResidualAdds(g, inferGraph(g, inputs, { concrete: true, fold: foldNative, foldCache: new Map() }).values)
  const fused = f.nodes.filter((n) => n.attrs.has(fusedResidualAttr)).map((n) => `${n.name}: ${n.inputs.join(',')} -> ${n.outputs[0]}`)
  t.same(fused, ['conv_h1: a,w1,b1,a -> s1', 'conv_h2: b,w2,b2,b -> s2', 'conv_h3: c,w3,b3,c -> d'], 'blocks 1-3 fuse, with R as the fourth input')
  t.same(f.nodes.filter((n) => n.opType === 'Add').map((n) => n.outputs[0]), ['e', 'g'], 'the broadcasting Add and the Add of a later tensor stay')
  t.equal(f.nodes.find((n) => n.name === 'conv_h1')!.inputs.length, 4)
  // a Conv that already absorbed a Relu is not fused (its clamp would come before the Add)
  const { fuseActivations } = await import('../../lib/model/fuse-activations.js')
  const pre = fuseActivations(g)
  const again = fuseResidualAdds(pre, inferGraph(pre, inputs, { concrete: true, fold: foldNative, foldCache: new Map() }).values)
  t.notOk(again.nodes.find((n) => n.name === 'conv_a0')!.attrs.has(fusedResidualAttr), 'the stem with its Relu stays unfused')
  const relued = fuseActivations(f).nodes.find((n) => n.name === 'conv_h1')!
  t.same(fusedClamp(relued), { min: 0, max: Infinity }, 'then a Relu after the fused Add is absorbed as usual')
  // the budget's bookkeeping still counts the Add and Relu each fused Conv absorbed
  const { bookkeepingLayers } = await import('../../lib/plan/budget/budget-reserve.js')
  t.equal(bookkeepingLayers({ layers: new Array(10), graph: f }), 10 + 2 * 3)
  t.equal(bookkeepingLayers({ layers: new Array(10), graph: g }), 10, 'nothing fused, nothing added')
})

t.test('engines with the fusion match onnxruntime on the unfused graph', async (t) => {
  t.teardown(() => void 0)
  const path = tempFile('residual.onnx', residualModel())
  const feeds = { x: input() }
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    const fused = (engine as unknown as { graph: Graph }).graph.nodes.filter((n) => n.attrs.has(fusedResidualAttr)).length
    t.equal(fused, 3, `the plain engine runs 3 fused Conv+Add nodes (${threads} threads)`)
    const got = await engine.infer(feeds)
    await engine.close()
    const c = compareTensors(got.g!, want.g!, 1e-4, 1e-4)
    t.ok(c.ok, `plain engine, ${threads} threads: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  // A package: the same graph, planned for a budget small enough to slice layers and stream weights.
  const { blobs, runs } = await packageRunsAtMinimum(t, path, feeds)
  t.ok(blobs > 0, `${blobs} weight blobs in the package`)
  let sliced = 0
  for (const { budget, outputs, stats: s } of runs) {
    sliced += s.slicedLayers
    const c = compareTensors(outputs.g!, want.g!, 1e-4, 1e-4)
    t.ok(c.ok, `package at ${budget ?? 'unlimited'} budget (${s.slicedLayers} sliced layers, ${s.loadsPerInference} loads): max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  t.ok(sliced > 0, 'at its minimum budget the package slices layers (the residual is sliced with their output channels)')
})

/**
 * A downsampling block on an input of symbolic height and width (as torchvision exports them): the
 * shortcut is a 1x1 stride-2 projection, the main path a padded 3x3 stride-2 conv and a 1x1. Their sizes
 * are the same expression written two ways (((h-1)/2)+1 and ((h+2-3)/2)+1) until lib/model/dims.ts
 * folds constants; the block's Add must fuse at open, before any shape is known.
 */
function downsampleModel(): Uint8Array {
  const c = 16
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: ['batch', c, 'height', 'width'] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('wp', [2 * c, c, 1, 1], 0.2), weights('wa', [2 * c, c, 3, 3], 0.1), weights('ba', [2 * c]), weights('wb', [2 * c, 2 * c, 1, 1], 0.1), weights('bb', [2 * c])],
    nodes: [
      conv('x', 'wp', undefined, 'p', 1, { stride: 2, pad: 0 }),
      conv('x', 'wa', 'ba', 'a0', 3, { stride: 2 }), { op: 'Relu', inputs: ['a0'], outputs: ['a'] },
      conv('a', 'wb', 'bb', 'h', 1), { op: 'Add', inputs: ['p', 'h'], outputs: ['s'] }, { op: 'Relu', inputs: ['s'], outputs: ['y'] },
    ],
  })
}

t.test('a stride-2 block on symbolic height and width fuses its residual at open, and computes what onnxruntime does', async (t) => {
  const path = tempFile('downsample.onnx', downsampleModel())
  const engine = await open(path, { threads: 1 })
  t.teardown(() => engine.close())
  const graph = (engine as unknown as { graph: Graph }).graph
  t.equal(graph.nodes.filter((n) => n.attrs.has(fusedResidualAttr)).length, 1, 'the Add is fused into the last conv')
  t.equal(graph.nodes.filter((n) => n.opType === 'Add').length, 0)
  t.same(engine.outputs[0]!.dims, ['batch', 32, '((height-1)/2)+1', '((width-1)/2)+1'], 'the output size written once, constants folded')
  for (const [h, w] of [[16, 16], [15, 9], [7, 20]] as const) {
    const feeds = { x: seededInput([2, 16, h, w], h * w) }
    const want = await runOrt(path, feeds)
    const got = await engine.infer(feeds)
    const c = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `${h}x${w}: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
})
