// SPDX-License-Identifier: Apache-2.0
// fuseActivations: producer -> Relu/Clip pairs with a single consumer become one node; others stay.
import t from 'tap'
import { fuseActivations, fusedClamp } from '../../lib/model/fuse-activations.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { makeModel } from '../helpers/make-model.js'

const w = { name: 'w', dims: [2, 2], floats: [1, 2, 3, 4] }

t.test('Conv -> Relu fuses into one node producing the Relu output', async (t) => {
  const g = parseOnnx(
    makeModel({
      inputs: [{ name: 'x', dtype: 'float32', dims: [3, 2] }],
      outputs: [{ name: 'y', dtype: 'float32' }],
      initializers: [w],
      nodes: [
        { op: 'Conv', inputs: ['x', 'w'], outputs: ['h'], name: 'mm' },
        { op: 'Relu', inputs: ['h'], outputs: ['y'] },
      ],
    }),
    '.',
  )
  const f = fuseActivations(g)
  t.equal(f.nodes.length, 1)
  t.same(f.nodes[0]!.outputs, ['y'])
  t.equal(f.nodes[0]!.name, 'mm')
  t.same(fusedClamp(f.nodes[0]!), { min: 0, max: Infinity })
})

t.test('Clip with constant bounds (opset 13 inputs) fuses; a second consumer prevents fusion', async (t) => {
  const spec = (extraConsumer: boolean) =>
    parseOnnx(
      makeModel({
        inputs: [{ name: 'x', dtype: 'float32', dims: [3, 2] }],
        outputs: [{ name: 'y', dtype: 'float32' }, ...(extraConsumer ? [{ name: 'z', dtype: 'float32' as const }] : [])],
        initializers: [w, { name: 'lo', dims: [], floats: [0] }, { name: 'hi', dims: [], floats: [6] }],
        nodes: [
          { op: 'Conv', inputs: ['x', 'w'], outputs: ['h'] },
          { op: 'Clip', inputs: ['h', 'lo', 'hi'], outputs: ['y'] },
          ...(extraConsumer ? [{ op: 'Neg', inputs: ['h'], outputs: ['z'] }] : []),
        ],
      }),
      '.',
    )
  const fused = fuseActivations(spec(false))
  t.equal(fused.nodes.length, 1)
  t.same(fusedClamp(fused.nodes[0]!), { min: 0, max: 6 })
  const kept = fuseActivations(spec(true))
  t.equal(kept.nodes.length, 3, 'h is also read by Neg, so the Conv keeps its own output')
  t.equal(fusedClamp(kept.nodes[0]!), undefined)
})

t.test('an activation on a graph output value is not absorbed, nor a non-clamp activation', async (t) => {
  const g = parseOnnx(
    makeModel({
      inputs: [{ name: 'x', dtype: 'float32', dims: [3, 2] }],
      outputs: [{ name: 'h', dtype: 'float32' }, { name: 'y', dtype: 'float32' }, { name: 's', dtype: 'float32' }],
      initializers: [w],
      nodes: [
        { op: 'Conv', inputs: ['x', 'w'], outputs: ['h'] },
        { op: 'Relu', inputs: ['h'], outputs: ['y'] },
        { op: 'Conv', inputs: ['x', 'w'], outputs: ['g'] },
        { op: 'Sigmoid', inputs: ['g'], outputs: ['s'] },
      ],
    }),
    '.',
  )
  t.equal(fuseActivations(g), g, 'nothing to fuse: the same graph comes back')
})
