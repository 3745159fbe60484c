// SPDX-License-Identifier: Apache-2.0
// GELU as exporters write it out of elementwise nodes, fused into one Gelu node (lib/model/fuse-gelu.ts),
// and a MatMul's bias Add moved into the MatMul (lib/model/fuse-matmul-bias.ts): which chains fuse,
// and that the engine on the fused graph computes what onnxruntime computes on the unfused one.
import t from 'tap'
import { fuseGelu } from '../../lib/model/fuse-gelu.js'
import { fuseMatMulBias } from '../../lib/model/fuse-matmul-bias.js'
import type { Graph } from '../../lib/model/ir.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { fusedEnginesMatchOrt, seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile, type ModelSpec } from '../helpers/make-model.js'

const weights = seededWeights(43)
const scalar = (name: string, v: number): { name: string; dims: number[]; floats: number[] } => ({ name, dims: [], floats: [v] })
type Nodes = ModelSpec['nodes'][number][]

/** PyTorch's exact GELU: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), with the names prefixed by p. */
const erfTorch = (x: string, y: string, p: string): Nodes => [
  { op: 'Div', inputs: [x, 'sqrt2'], outputs: [`${p}d`] }, { op: 'Erf', inputs: [`${p}d`], outputs: [`${p}e`] },
  { op: 'Add', inputs: [`${p}e`, 'one'], outputs: [`${p}p`] }, { op: 'Mul', inputs: [x, `${p}p`], outputs: [`${p}m`] },
  { op: 'Mul', inputs: [`${p}m`, 'half'], outputs: [y] },
]

/**
 * x [2, 5, 16] -> MatMul W0 [16, 24] + Add b0                                    (bias fuses)
 *   -> exact GELU as torch writes it                                              (fuses)
 *   -> MatMul W1 + Add(b1 through an Identity)                                    (bias fuses)
 *   -> Mul(x, 0.5) * (1 + Erf(Mul(x, 1/sqrt 2 as a Constant node)))               (fuses)
 *   -> x * ((Erf(Div(x, sqrt 2)) + 1) * 0.5)                                      (fuses)
 *   -> the tanh approximation with Pow(x, 3), and with Mul(Mul(x, x), x)          (fuse)
 *   -> torch's chain with 0.6 for 0.5                                             (stays)
 *   -> torch's chain whose Erf output is also added to the result                 (stays)
 */
function geluModel(): Uint8Array {
  const tanh = (x: string, y: string, p: string, cube: Nodes): Nodes => [
    ...cube, { op: 'Mul', inputs: [`${p}u`, 'c044'], outputs: [`${p}k`] }, { op: 'Add', inputs: [x, `${p}k`], outputs: [`${p}s`] },
    { op: 'Mul', inputs: ['s2pi', `${p}s`], outputs: [`${p}sc`] }, { op: 'Tanh', inputs: [`${p}sc`], outputs: [`${p}th`] },
    { op: 'Add', inputs: ['one', `${p}th`], outputs: [`${p}p`] }, { op: 'Mul', inputs: ['half', x], outputs: [`${p}h`] },
    { op: 'Mul', inputs: [`${p}h`, `${p}p`], outputs: [y] },
  ]
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [2, 5, 16] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [
      weights('w0', [16, 24], 0.4), weights('b0', [24]), weights('w1', [24, 24], 0.3), weights('b1', [24]),
      scalar('sqrt2', Math.SQRT2), scalar('one', 1), scalar('half', 0.5), scalar('notHalf', 0.6), scalar('three', 3),
      scalar('c044', 0.044715), scalar('s2pi', Math.sqrt(2 / Math.PI)),
    ],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'w0'], outputs: ['a0'] }, { op: 'Add', inputs: ['a0', 'b0'], outputs: ['a'] },
      ...erfTorch('a', 'y1', 'g1'),
      { op: 'MatMul', inputs: ['y1', 'w1'], outputs: ['c0'] }, { op: 'Identity', inputs: ['b1'], outputs: ['b1i'] }, { op: 'Add', inputs: ['b1i', 'c0'], outputs: ['c'] },
      { op: 'Constant', inputs: [], outputs: ['isqrt2'], tensor: { value: { dims: [], floats: [Math.SQRT1_2] } } },
      { op: 'Mul', inputs: ['c', 'half'], outputs: ['g2h'] }, { op: 'Mul', inputs: ['isqrt2', 'c'], outputs: ['g2d'] },
      { op: 'Erf', inputs: ['g2d'], outputs: ['g2e'] }, { op: 'Add', inputs: ['one', 'g2e'], outputs: ['g2p'] }, { op: 'Mul', inputs: ['g2h', 'g2p'], outputs: ['y2'] },
      { op: 'Div', inputs: ['y2', 'sqrt2'], outputs: ['g3d'] }, { op: 'Erf', inputs: ['g3d'], outputs: ['g3e'] },
      { op: 'Add', inputs: ['g3e', 'one'], outputs: ['g3p'] }, { op: 'Mul', inputs: ['g3p', 'half'], outputs: ['g3q'] }, { op: 'Mul', inputs: ['y2', 'g3q'], outputs: ['y3'] },
      ...tanh('y3', 'y4', 'g4', [{ op: 'Pow', inputs: ['y3', 'three'], outputs: ['g4u'] }]),
      ...tanh('y4', 'y5', 'g5', [{ op: 'Mul', inputs: ['y4', 'y4'], outputs: ['g5sq'] }, { op: 'Mul', inputs: ['g5sq', 'y4'], outputs: ['g5u'] }]),
      ...erfTorch('y5', 'y6', 'g6').map((n) => (n.outputs[0] === 'y6' ? { ...n, inputs: ['g6m', 'notHalf'] } : n)),
      ...erfTorch('y6', 'y7', 'g7'), { op: 'Add', inputs: ['y7', 'g7e'], outputs: ['y'] },
    ],
  })
}

const gelus = (g: Graph): number => g.nodes.filter((n) => n.opType === 'Gelu').length
const biased = (g: Graph): string[] => g.nodes.filter((n) => n.opType === 'MatMul' && n.inputs.length === 3).map((n) => `${n.inputs[2]} -> ${n.outputs[0]}`)

t.test('fuseGelu fuses exact and tanh GELUs in every grouping, and only whole single-use chains', async (t) => {
  const g = parseOnnx(geluModel(), '.')
  const f = fuseGelu(g)
  t.same(f.nodes.filter((n) => n.opType === 'Gelu').map((n) => `${n.inputs[0]} -> ${n.outputs[0]} ${n.attrs.get('approximate')}`),
    ['a -> y1 none', 'c -> y2 none', 'y2 -> y3 none', 'y3 -> y4 tanh', 'y4 -> y5 tanh'])
  t.equal(f.nodes.filter((n) => n.opType === 'Erf').length, 2, 'the chain with 0.6 and the one whose Erf has two users stay')
  t.equal(f.nodes.length, g.nodes.length - 4 - 4 - 4 - 7 - 8)
  t.equal(fuseGelu(f), f, 'nothing left to fuse: the same graph')
  const asOutput = { ...g, outputs: [...g.outputs, { name: 'g1e', dtype: 'float32' as const, dims: undefined }] }
  t.equal(gelus(fuseGelu(asOutput)), 4, 'a chain whose Erf output is a graph output stays')
})

t.test('fuseMatMulBias moves a constant [N] row added after a MatMul with a constant 2-D B into the MatMul', async (t) => {
  const f = fuseMatMulBias(parseOnnx(geluModel(), '.'))
  t.same(biased(f), ['b0 -> a', 'b1i -> c'], 'an initializer, and one through an Identity')
  const spec = (addInput: string, extra: Nodes = [], inits: ModelSpec['initializers'] = []): Graph => parseOnnx(makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [3, 8] }, { name: 'r', dtype: 'float32', dims: [3, 4] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w', [8, 4]), weights('b', [4]), weights('b2', [1, 4]), ...inits],
    nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['m'] }, { op: 'Add', inputs: ['m', addInput], outputs: ['y'] }, ...extra],
  }), '.')
  t.same(biased(fuseMatMulBias(spec('b'))), ['b -> y'])
  t.same(biased(fuseMatMulBias(spec('r'))), [], 'an input added: stays')
  t.same(biased(fuseMatMulBias(spec('b2'))), [], 'a [1, N] row: stays')
  t.same(biased(fuseMatMulBias(spec('b', [{ op: 'Neg', inputs: ['m'], outputs: ['n'] }]))), [], 'a product with another user: stays')
})

t.test('the engine on the fused graph matches onnxruntime on the unfused one', async (t) => {
  const path = tempFile('gelu.onnx', geluModel())
  await fusedEnginesMatchOrt(t, 'MatMul + bias -> GELU chains', path, { x: seededInput([2, 5, 16], 5) }, gelus, 5)
})
