// SPDX-License-Identifier: Apache-2.0
// A stem Conv and its MaxPool computed together in bands of pool rows (lib/model/fuse-conv-pool.ts,
// native/runtime/conv_pool.h): which pairs fuse, that fused engines compute what onnxruntime computes
// on the unfused graph (paddings, strides, ceil_mode, pool dilation, several bands, batch 2, 1 and 2
// threads), and that a package prepared with slicing fuses and so runs in a smaller budget than the
// On-Demand package (slicing: false). The native op alone: test/native/conv-pool.test.ts.
import t from 'tap'
import { fuseConvPools, hasFusedPool } from '../../lib/model/fuse-conv-pool.js'
import { fuseActivations, fusedMaxAttr } from '../../lib/model/fuse-activations.js'
import type { Graph } from '../../lib/model/ir.js'
import { slicedPackageFusesBelowOnDemand } from '../helpers/budget.js'
import { concreteGraph, fusedEnginesMatchOrt, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'

const weights = seededWeights(91)

interface Case {
  readonly what: string
  readonly x: number[]
  readonly m: number
  readonly conv: { kernel: number[]; strides: number[]; pads: number[] }
  readonly act?: 'Relu' | 'Clip6'
  readonly bias?: boolean
  readonly pool: { kernel_shape: number[]; strides: number[]; pads?: number[]; dilations?: number[]; ceil?: boolean }
}

const cases: Case[] = [
  { what: 'SqueezeNet-like: 3x3 s2 without padding, Relu, pool 3x3 s2', x: [1, 3, 67, 67], m: 16, conv: { kernel: [3, 3], strides: [2, 2], pads: [0, 0, 0, 0] }, act: 'Relu', bias: true, pool: { kernel_shape: [3, 3], strides: [2, 2] } },
  { what: 'ResNet-like: 7x7 s2 pad 3, pool 3x3 s2 pad 1, batch 2', x: [2, 3, 64, 58], m: 24, conv: { kernel: [7, 7], strides: [2, 2], pads: [3, 3, 3, 3] }, act: 'Relu', bias: true, pool: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] } },
  // conv rows of 128 x 80 floats: bands of a few pool rows (eight bands), each recomputing a shared conv row
  { what: 'eight bands: 3x3 s2 pad 1, Clip(0, 6), pool 3x3 s2', x: [1, 3, 160, 160], m: 128, conv: { kernel: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }, act: 'Clip6', bias: true, pool: { kernel_shape: [3, 3], strides: [2, 2] } },
  { what: '4 channels, 5x3 kernel, strides (1, 2), no bias, pool 2x2 s2 ceil_mode', x: [1, 4, 33, 35], m: 8, conv: { kernel: [5, 3], strides: [1, 2], pads: [2, 1, 1, 0] }, pool: { kernel_shape: [2, 2], strides: [2, 2], ceil: true } },
  { what: '1 channel, pool 3x3 s2 pad 1 with dilation 2', x: [1, 1, 40, 41], m: 5, conv: { kernel: [3, 3], strides: [1, 1], pads: [1, 1, 1, 1] }, bias: true, pool: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], dilations: [2, 2] } },
]

function stemModel(c: Case): Uint8Array {
  const C = c.x[1]!
  const nodes: ModelSpec['nodes'][number][] = [
    { op: 'Conv', inputs: c.bias ? ['x', 'w', 'b'] : ['x', 'w'], outputs: [c.act ? 'c' : 'a'], name: 'stem', ints: { kernel_shape: c.conv.kernel, strides: c.conv.strides, pads: c.conv.pads } },
  ]
  if (c.act === 'Relu') nodes.push({ op: 'Relu', inputs: ['c'], outputs: ['a'] })
  if (c.act === 'Clip6') nodes.push({ op: 'Clip', inputs: ['c', 'lo', 'hi'], outputs: ['a'] })
  nodes.push({ op: 'MaxPool', inputs: ['a'], outputs: ['y'], name: 'pool', ints: { kernel_shape: c.pool.kernel_shape, strides: c.pool.strides, ...(c.pool.pads ? { pads: c.pool.pads } : {}), ...(c.pool.dilations ? { dilations: c.pool.dilations } : {}) }, int: c.pool.ceil ? { ceil_mode: 1 } : {} })
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: c.x }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w', [c.m, C, ...c.conv.kernel]),
      ...(c.bias ? [weights('b', [c.m])] : []),
      ...(c.act === 'Clip6' ? [{ name: 'lo', dims: [], floats: [0] }, { name: 'hi', dims: [], floats: [6] }] : []),
    ],
    nodes,
  })
}

const fusedCount = (g: Graph): number => g.nodes.filter(hasFusedPool).length

t.test('fuseConvPools fuses a stem by rows and the MaxPool that alone reads it, and only that', async (t) => {
  const C = 16
  const model = makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 3, 20, 20] }],
    outputs: [{ name: 'p1', dtype: 'float32' }, { name: 'p2', dtype: 'float32' }, { name: 'p3', dtype: 'float32' }, { name: 'n3', dtype: 'float32' }, { name: 'p4', dtype: 'float32' }],
    initializers: [weights('w1', [C, 3, 3, 3]), weights('w2', [C, C, 3, 3]), weights('w3', [4, 3, 3, 3]), weights('w4', [4, 3, 3, 3])],
    nodes: [
      { op: 'Conv', inputs: ['x', 'w1'], outputs: ['c1'], name: 'stem', ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } },
      { op: 'Relu', inputs: ['c1'], outputs: ['a1'] },
      { op: 'MaxPool', inputs: ['a1'], outputs: ['p1'], ints: { kernel_shape: [2, 2], strides: [2, 2] } },
      // 16 input channels: not a stem by rows
      { op: 'Conv', inputs: ['p1', 'w2'], outputs: ['c2'], name: 'wide', ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } },
      { op: 'MaxPool', inputs: ['c2'], outputs: ['p2'], ints: { kernel_shape: [2, 2], strides: [2, 2] } },
      // the conv output has a second reader
      { op: 'Conv', inputs: ['x', 'w3'], outputs: ['c3'], name: 'shared', ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } },
      { op: 'MaxPool', inputs: ['c3'], outputs: ['p3'], ints: { kernel_shape: [2, 2], strides: [2, 2] } },
      { op: 'Neg', inputs: ['c3'], outputs: ['n3'] },
      // the pool also gives Indices
      { op: 'Conv', inputs: ['x', 'w4'], outputs: ['c4'], name: 'indexed', ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } },
      { op: 'MaxPool', inputs: ['c4'], outputs: ['p4', 'i4'], ints: { kernel_shape: [2, 2], strides: [2, 2] } },
    ],
  })
  const { graph, inferred } = concreteGraph(model, [1, 3, 20, 20])
  const f = fuseConvPools(fuseActivations(graph), inferred.values)
  t.same(f.nodes.filter(hasFusedPool).map((n) => `${n.name} -> ${n.outputs.join(',')}`), ['stem -> p1'], 'only the stem fuses, taking the pool output')
  t.same(f.nodes.filter((n) => n.opType === 'MaxPool').length, 3, 'the other three pools stay')
  t.ok(f.nodes.find((n) => n.name === 'stem')!.attrs.has(fusedMaxAttr), 'the stem keeps its fused Relu')
})

t.test('fused engines match onnxruntime on the unfused graph', async (t) => {
  for (const c of cases) await fusedEnginesMatchOrt(t, c.what, tempFile('stem.onnx', stemModel(c)), { x: seededInput(c.x, 7) }, fusedCount)
})

t.test('a package with slicing fuses the stem and runs in a smaller budget than On-Demand', async (t) => {
  // the conv's output (128 x 80 x 80 floats, 3.3 MB) is never whole in the fused package
  const c = cases[2]!
  await slicedPackageFusesBelowOnDemand(t, stemModel(c), { x: seededInput(c.x, 8) }, 2e6)
})
