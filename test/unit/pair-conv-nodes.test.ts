// SPDX-License-Identifier: Apache-2.0
// bench/models/op-profile.ts pairConvNodes: onnxruntime's renamed NCHWc nodes are paired by name when
// their stripped name is a flexpipe node's, the rest in execution order.
import t from 'tap'
import { pairConvNodes, type NodeRow } from '../../bench/models/op-profile.js'

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
