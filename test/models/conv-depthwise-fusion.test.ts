// SPDX-License-Identifier: Apache-2.0
// A conv and the depthwise 3x3 after it computed together in bands of output rows
// (lib/model/fuse-conv-depthwise.ts, native/runtime/conv_depthwise.h): which pairs fuse, that fused
// engines compute what onnxruntime computes on the unfused graph (a pointwise expansion or a stem by
// rows, depthwise stride 1 and 2, asymmetric pads, no biases, batch 2, 1 and 2 threads), and that a
// package prepared with slicing fuses and so runs in a smaller budget than the On-Demand package
// (slicing: false); and the real MobileNetV2 fixture with all its 17 pairs fused (they are below the
// size threshold at 96 x 96, so the test lowers it). The native op alone: test/native/conv-depthwise.test.ts.
import t from 'tap'
import { join } from 'node:path'
import { open } from '../../lib/index.js'
import { fuseActivations, fusedMaxAttr } from '../../lib/model/fuse-activations.js'
import { fuseConvDepthwise, fusedDepthwisePrefix, hasFusedDepthwise } from '../../lib/model/fuse-conv-depthwise.js'
import { inferGraph } from '../../lib/model/infer-graph.js'
import type { Graph, ValueInfo } from '../../lib/model/ir.js'
import { foldNative } from '../../lib/runtime/fold-native.js'
import { slicedPackageFusesBelowOnDemand } from '../helpers/budget.js'
import { compareTensors } from '../helpers/compare.js'
import { fixtures } from '../helpers/data.js'
import { concreteGraph, fusedEnginesMatchOrt, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(93)
const clipBounds = [{ name: 'lo', dims: [], floats: [0] }, { name: 'hi', dims: [], floats: [6] }]

interface Case {
  readonly what: string
  readonly x: number[]
  readonly m: number
  /** The first conv: kernel, strides, pads (ONNX order). */
  readonly conv: { kernel: number[]; strides: number[]; pads: number[] }
  readonly dw: { stride: number; pads: number[] }
  readonly act1?: 'Relu' | 'Clip6'
  readonly act2?: 'Relu' | 'Clip6'
  readonly bias: boolean
}

const pointwise = { kernel: [1, 1], strides: [1, 1], pads: [0, 0, 0, 0] }
// Middle tensors of at least 1 MiB per image (fuseMinMiddleBytes)
const cases: Case[] = [
  { what: 'MobileNetV2-like expansion, stride-2 depthwise, Clip(0, 6) twice', x: [1, 16, 64, 64], m: 64, conv: pointwise, dw: { stride: 2, pads: [1, 1, 1, 1] }, act1: 'Clip6', act2: 'Clip6', bias: true },
  { what: 'expansion, stride-1 depthwise, Relu twice, batch 2', x: [2, 24, 48, 48], m: 144, conv: pointwise, dw: { stride: 1, pads: [1, 1, 1, 1] }, act1: 'Relu', act2: 'Relu', bias: true },
  { what: 'expansion without biases or activations, asymmetric depthwise pads', x: [1, 8, 60, 72], m: 96, conv: pointwise, dw: { stride: 1, pads: [0, 1, 1, 0] }, bias: false },
  { what: 'MobileNetV2-like stem (3x3 s2 over RGB) and stride-1 depthwise', x: [1, 3, 192, 192], m: 32, conv: { kernel: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }, dw: { stride: 1, pads: [1, 1, 1, 1] }, act1: 'Clip6', act2: 'Clip6', bias: true },
  { what: 'stem 5x3 strides (1, 2) over 4 channels, stride-2 depthwise', x: [1, 4, 90, 99], m: 64, conv: { kernel: [5, 3], strides: [1, 2], pads: [2, 1, 2, 1] }, dw: { stride: 2, pads: [1, 1, 1, 1] }, act2: 'Relu', bias: true },
]

function actNodes(act: Case['act1'], from: string, to: string): ModelSpec['nodes'][number][] {
  if (act === 'Relu') return [{ op: 'Relu', inputs: [from], outputs: [to] }]
  if (act === 'Clip6') return [{ op: 'Clip', inputs: [from, 'lo', 'hi'], outputs: [to] }]
  return []
}

function pairModel(c: Case): Uint8Array {
  const C = c.x[1]!
  const mid = c.act1 ? 'c1' : 'a1'
  const y = c.act2 ? 'c2' : 'y'
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: c.x }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w1', [c.m, C, ...c.conv.kernel]),
      weights('w2', [c.m, 1, 3, 3]),
      ...(c.bias ? [weights('b1', [c.m]), weights('b2', [c.m])] : []),
      ...clipBounds,
    ],
    nodes: [
      { op: 'Conv', inputs: c.bias ? ['x', 'w1', 'b1'] : ['x', 'w1'], outputs: [mid], name: 'first', ints: { kernel_shape: c.conv.kernel, strides: c.conv.strides, pads: c.conv.pads } },
      ...actNodes(c.act1, 'c1', 'a1'),
      { op: 'Conv', inputs: c.bias ? ['a1', 'w2', 'b2'] : ['a1', 'w2'], outputs: [y], name: 'dw', ints: { kernel_shape: [3, 3], strides: [c.dw.stride, c.dw.stride], pads: c.dw.pads }, int: { group: c.m } },
      ...actNodes(c.act2, 'c2', 'y'),
    ],
  })
}

const fusedCount = (g: Graph): number => g.nodes.filter(hasFusedDepthwise).length

t.test('fuseConvDepthwise fuses a pointwise or by-rows conv and the depthwise that alone reads it, and only that', async (t) => {
  const dims = [1, 16, 64, 64]
  const node = (name: string, x: string, w: string, y: string, k: number, group = 1, stride = 1): ModelSpec['nodes'][number] =>
    ({ op: 'Conv', inputs: [x, w], outputs: [y], name, ints: { kernel_shape: [k, k], pads: Array(4).fill(k === 3 ? 1 : 0), strides: [stride, stride] }, int: { group } })
  const model = makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims }],
    outputs: ['y1', 'y2', 'y3', 'n3', 'y4', 'y5'].map((name) => ({ name, dtype: 'float32' as const })),
    initializers: [
      weights('we', [64, 16, 1, 1]), weights('wd', [64, 1, 3, 3]),
      weights('ws', [32, 16, 1, 1]), weights('wsd', [32, 1, 3, 3]),
      weights('w3', [64, 16, 3, 3]), weights('wg', [64, 2, 3, 3]),
    ],
    nodes: [
      // fuses: 64 x 64 x 64 floats (1 MiB), its Relu fused too
      node('expand', 'x', 'we', 'e1', 1), { op: 'Relu', inputs: ['e1'], outputs: ['r1'] }, node('depthwise', 'r1', 'wd', 'y1', 3, 64, 2),
      // a middle tensor of 0.5 MiB
      node('small', 'x', 'ws', 'e2', 1), node('small_dw', 'e2', 'wsd', 'y2', 3, 32),
      // the middle tensor has a second reader
      node('shared', 'x', 'we', 'e3', 1), node('shared_dw', 'e3', 'wd', 'y3', 3, 64), { op: 'Neg', inputs: ['e3'], outputs: ['n3'] },
      // a 3x3 over 16 channels is neither pointwise nor by rows
      node('wide', 'x', 'w3', 'e4', 3), node('wide_dw', 'e4', 'wd', 'y4', 3, 64),
      // a grouped second conv that is not depthwise
      node('expand2', 'x', 'we', 'e5', 1), node('grouped', 'e5', 'wg', 'y5', 3, 32),
    ],
  })
  const { graph, inferred } = concreteGraph(model, dims)
  const f = fuseConvDepthwise(fuseActivations(graph), inferred.values)
  t.same(f.nodes.filter(hasFusedDepthwise).map((n) => `${n.name}(${n.inputs.join(',')}) -> ${n.outputs.join(',')}`), ['expand(x,we,,wd) -> y1'], 'only the expansion fuses, taking the depthwise weight and output')
  const fused = f.nodes.find((n) => n.name === 'expand')!
  t.ok(fused.attrs.has(fusedMaxAttr), 'the expansion keeps its fused Relu')
  t.same(fused.attrs.get(`${fusedDepthwisePrefix}strides`), [2, 2], 'and carries the depthwise attributes')
  t.equal(f.nodes.length, graph.nodes.length - 2, 'the Relu and the depthwise node are gone')
})

t.test('fused engines match onnxruntime on the unfused graph', async (t) => {
  for (const c of cases) await fusedEnginesMatchOrt(t, c.what, tempFile('pair.onnx', pairModel(c)), { x: seededInput(c.x, 11) }, fusedCount)
})

t.test('a package with slicing fuses the pair and runs in a smaller budget than On-Demand', async (t) => {
  // MobileNetV2's second block at 128 x 128: the expansion's 6.3 MB output is never whole in the fused
  // package, bands of it (2 x ~0.5 MiB) are
  const c: Case = { what: 'block', x: [1, 16, 128, 128], m: 96, conv: pointwise, dw: { stride: 2, pads: [1, 1, 1, 1] }, act1: 'Clip6', act2: 'Clip6', bias: true }
  await slicedPackageFusesBelowOnDemand(t, pairModel(c), { x: seededInput(c.x, 12) }, 3e6)
})

t.test('the MobileNetV2 fixture with every pair fused matches onnxruntime', async (t) => {
  const path = join(fixtures, 'models', 'mobilenetv2_small.onnx')
  for (const batch of [1, 3]) {
    const feeds = { input: seededInput([batch, 3, 96, 96], 5 + batch) }
    const want = await runOrt(path, feeds)
    for (const threads of [1, 2]) {
      const engine = await open(path, { threads })
      const e = engine as unknown as { graph: Graph }
      t.equal(fusedCount(e.graph), 0, `batch ${batch}: no middle tensor of the fixture reaches the threshold`)
      const inputs = new Map<string, ValueInfo>([['input', { dtype: 'float32', dims: [batch, 3, 96, 96] }]])
      const values = inferGraph(e.graph, inputs, { concrete: false, fold: foldNative, foldCache: new Map() }).values
      e.graph = fuseConvDepthwise(e.graph, values, 0) // before the first infer(), which plans the graph
      t.equal(fusedCount(e.graph), 17, 'the stem and 16 expansions fuse with their depthwise')
      const got = await engine.infer(feeds)
      await engine.close()
      const r = compareTensors(got.logits!, want.logits!, 1e-4, 1e-4)
      t.ok(r.ok, `batch ${batch}, ${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
    }
  }
})
