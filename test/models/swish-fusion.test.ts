// SPDX-License-Identifier: Apache-2.0
// SiLU as exporters write it, Mul(x, Sigmoid(x)), fused into one Sigmoid node computing x * sigmoid(x)
// (lib/model/fuse-swish.ts): which pairs fuse, and that the engine on the fused graph computes what
// onnxruntime computes on the unfused one.
import t from 'tap'
import { fuseSwish, isFusedSwish } from '../../lib/model/fuse-swish.js'
import type { Graph } from '../../lib/model/ir.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { convNode, fusedEnginesMatchOrt, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'

const weights = seededWeights(41)
const C = 24

/**
 * x [1, 3, 12, 12] -> 3x3 conv 3->C = a; s = Sigmoid(a); b = Mul(a, s)            (fuses)
 * 1x1 conv(b) = c; Mul(Sigmoid(c), c) = d                                         (fuses: operands swapped)
 * e = Sigmoid(d); f = Mul(d, e); g = Add(e, f)                                    (e has two users: stays)
 * h = Sigmoid(g); y = Mul(g', h) with g' = Neg(g)                                 (another operand: stays)
 */
function swishModel(): Uint8Array {
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 3, 12, 12] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w0', [C, 3, 3, 3]), weights('b0', [C]), weights('w1', [C, C, 1, 1], 0.2), weights('b1', [C])],
    nodes: [
      convNode('x', 'w0', 'b0', 'a', 3), { op: 'Sigmoid', inputs: ['a'], outputs: ['s'] }, { op: 'Mul', inputs: ['a', 's'], outputs: ['b'] },
      convNode('b', 'w1', 'b1', 'c', 1), { op: 'Sigmoid', inputs: ['c'], outputs: ['sc'] }, { op: 'Mul', inputs: ['sc', 'c'], outputs: ['d'] },
      { op: 'Sigmoid', inputs: ['d'], outputs: ['e'] }, { op: 'Mul', inputs: ['d', 'e'], outputs: ['f'] }, { op: 'Add', inputs: ['e', 'f'], outputs: ['g'] },
      { op: 'Neg', inputs: ['g'], outputs: ['ng'] }, { op: 'Sigmoid', inputs: ['g'], outputs: ['h'] }, { op: 'Mul', inputs: ['ng', 'h'], outputs: ['y'] },
    ],
  })
}

const fusedCount = (g: Graph): number => g.nodes.filter(isFusedSwish).length

t.test('fuseSwish fuses Mul(x, Sigmoid(x)) in either order, and only when the sigmoid has no other use', async (t) => {
  const g = parseOnnx(swishModel(), '.')
  const f = fuseSwish(g)
  t.same(f.nodes.filter(isFusedSwish).map((n) => `${n.inputs[0]} -> ${n.outputs[0]}`), ['a -> b', 'c -> d'])
  t.same(f.nodes.filter((n) => n.opType === 'Mul').map((n) => n.outputs[0]), ['f', 'y'], 'the shared sigmoid and the Mul of another operand stay')
  t.equal(f.nodes.length, g.nodes.length - 2)
  t.equal(fuseSwish(f), f, 'nothing left to fuse: the same graph')
  const asOutput = { ...g, outputs: [...g.outputs, { name: 's', dtype: 'float32' as const, dims: undefined }] }
  t.same(fuseSwish(asOutput).nodes.filter(isFusedSwish).map((n) => n.outputs[0]), ['d'], 'a sigmoid that is a graph output stays')
})

t.test('the engine on the fused graph matches onnxruntime on the unfused one', async (t) => {
  const path = tempFile('swish.onnx', swishModel())
  await fusedEnginesMatchOrt(t, 'Conv -> SiLU', path, { x: seededInput([1, 3, 12, 12], 9) }, fusedCount, 2)
})
