// SPDX-License-Identifier: Apache-2.0
// bench/models/op-profile.ts pairConvNodes: onnxruntime's renamed NCHWc nodes are paired by name when
// their stripped name is a flexpipe node's or the value its fused chain ends in, the rest in execution
// order.
import t from 'tap'
import { chainOutputs, pairConvNodes, type NodeRow } from '../../bench/models/op-profile.js'
import type { Graph, Node } from '../../lib/model/ir.js'

const row = (node: string, ms: number, opType = 'Conv'): NodeRow => ({ node, opType, ms })

t.test("ResNet's downsample, which onnxruntime runs before conv3, pairs by name; the fused nodes by order", async (t) => {
  const flexpipe = [row('/l/conv1/Conv', 1), row('/l/conv3/Conv', 3), row('/l/downsample/Conv', 4), row('/l/Add', 9, 'Add')]
  const ort = [row('/l/relu/Relu_output_0_nchwc', 10), row('/l/downsample/Conv_output_0_nchwc', 40), row('/l/relu_2/Relu_output_0_nchwc', 30)]
  t.same(pairConvNodes(flexpipe, ort), [
    { node: '/l/conv1/Conv', flexpipe_ms: 1, ort_ms: 10 },
    { node: '/l/conv3/Conv', flexpipe_ms: 3, ort_ms: 30 },
    { node: '/l/downsample/Conv', flexpipe_ms: 4, ort_ms: 40 },
  ])
})

t.test('without name matches the pairing is execution order; different counts give no pairs', async (t) => {
  const flexpipe = [row('a', 1), row('b', 2, 'Gemm')]
  t.same(pairConvNodes(flexpipe, [row('x', 5, 'FusedConv'), row('y', 6, 'FusedGemm')]).map((p) => p.ort_ms), [5, 6])
  t.same(pairConvNodes(flexpipe, [row('x', 5)]), [])
})

t.test("with the model's chains, convolutions pair by the value their fused chain ends in, in any order", async (t) => {
  // SqueezeNet's fire module: onnxruntime runs expand3x3 before expand1x1 and names each after its Relu.
  const node = (name: string, opType: string, inputs: string[], outputs: string[]): Node => ({ name, opType, domain: '', inputs, outputs, attrs: new Map() })
  const graph = {
    nodes: [
      node('/f/squeeze/Conv', 'Conv', ['x', 'w0'], ['/f/squeeze/Conv_output_0']),
      node('/f/squeeze_activation/Relu', 'Relu', ['/f/squeeze/Conv_output_0'], ['/f/squeeze_activation/Relu_output_0']),
      node('/f/expand1x1/Conv', 'Conv', ['/f/squeeze_activation/Relu_output_0', 'w1'], ['/f/expand1x1/Conv_output_0']),
      node('/f/expand1x1_activation/Relu', 'Relu', ['/f/expand1x1/Conv_output_0'], ['/f/expand1x1_activation/Relu_output_0']),
      node('/f/expand3x3/Conv', 'Conv', ['/f/squeeze_activation/Relu_output_0', 'w3'], ['/f/expand3x3/Conv_output_0']),
      node('/f/expand3x3_activation/Relu', 'Relu', ['/f/expand3x3/Conv_output_0'], ['/f/expand3x3_activation/Relu_output_0']),
      node('/f/Concat', 'Concat', ['/f/expand1x1_activation/Relu_output_0', '/f/expand3x3_activation/Relu_output_0'], ['y']),
    ],
  } as unknown as Graph
  const chains = chainOutputs(graph)
  t.equal(chains.get('/f/expand3x3/Conv'), '/f/expand3x3_activation/Relu_output_0', 'a Conv chains through its sole Relu')
  t.equal(chains.get('/f/squeeze_activation/Relu'), '/f/squeeze_activation/Relu_output_0', 'two consumers end the chain')
  const flexpipe = [row('/f/squeeze/Conv', 1), row('/f/expand1x1/Conv', 2), row('/f/expand3x3/Conv', 3)]
  const ort = [
    row('/f/squeeze_activation/Relu_output_0_nchwc', 10),
    row('/f/expand3x3_activation/Relu_output_0_nchwc', 30),
    row('/f/expand1x1_activation/Relu_output_0_nchwc', 20),
  ]
  t.same(pairConvNodes(flexpipe, ort, chains).map((p) => p.ort_ms), [10, 20, 30])
  t.same(pairConvNodes(flexpipe, ort).map((p) => p.ort_ms), [10, 30, 20], 'without them, execution order pairs the expands wrongly')
})
