// SPDX-License-Identifier: Apache-2.0
// Data-dependent dims in shape inference (OpContext.dataDim, lib/model/infer-graph.ts): a symbolic pass
// gives NonZero's count and a computed TopK k symbols of their own with their upper bounds; a concrete
// pass gives the sizes read, or the bound before, and keeps a size data-dependent even where it knows it
// (so that the programs of every size share their ops); a concrete pass without sizes refuses them.
import t from 'tap'
import { UnsupportedOperatorError } from '../../lib/errors.js'
import { dataDimSymbol, inferGraph } from '../../lib/model/infer-graph.js'
import type { Graph, Node, ValueInfo } from '../../lib/model/ir.js'
import { compileDim } from '../../lib/plan/dynamic/dim-expr.js'

const node = (name: string, opType: string, inputs: string[], outputs: string[], attrs: Record<string, number> = {}): Node => ({ name, opType, domain: '', inputs, outputs, attrs: new Map(Object.entries(attrs)) })

// x [n, 3] -> NonZero -> nz [2, c]; Shape(nz)[1] -> count; Min(count, five) -> k; TopK(row0, k)
const graph: Graph = {
  name: 'g',
  opset: 13,
  inputs: [{ name: 'x', dtype: 'float32', dims: ['n', 3] }],
  outputs: [{ name: 'values', dtype: 'float32', dims: undefined }],
  initializers: new Map([
    ['one', { dtype: 'int64', dims: [1], data: BigInt64Array.from([1n]) }],
    ['two', { dtype: 'int64', dims: [1], data: BigInt64Array.from([2n]) }],
    ['five', { dtype: 'int64', dims: [1], data: BigInt64Array.from([5n]) }],
    ['zero', { dtype: 'int64', dims: [], data: BigInt64Array.from([0n]) }],
  ]),
  nodes: [
    node('select/NonZero', 'NonZero', ['x'], ['nz']),
    node('shape', 'Shape', ['nz'], ['nz_shape']),
    node('slice', 'Slice', ['nz_shape', 'one', 'two'], ['count']),
    node('min', 'Min', ['count', 'five'], ['k']),
    node('row', 'Gather', ['nz', 'zero'], ['row']),
    node('float', 'Cast', ['row'], ['rowf'], { to: 1 }),
    node('best', 'TopK', ['rowf', 'k'], ['values', 'indices']),
  ],
}
const inputs = (n: number | string): Map<string, ValueInfo> => new Map([['x', { dtype: 'float32', dims: [n, 3] }]])
const nz = dataDimSymbol('select/NonZero')
const best = dataDimSymbol('best')

t.test('symbols: one per node, one-to-one over node names, and read by dim-expr as one name', async (t) => {
  t.equal(nz, 'count.select_2f_NonZero')
  t.not(dataDimSymbol('a/b'), dataDimSymbol('a_b'), "'a/b' and 'a_b' get different symbols")
  t.not(dataDimSymbol('a_2f_b'), dataDimSymbol('a/b'), "and so do 'a_2f_b' and 'a/b'")
  t.equal(compileDim(`(${nz}*2)-1`, ['n', nz])(new Map([['n', 1], [nz, 4]])), 7)
})

t.test('a symbolic pass: NonZero and a TopK of min(count, 5) are data-dependent, bounded by n*3 and the count', async (t) => {
  const r = inferGraph(graph, inputs('n'), { concrete: false })
  t.same(r.dataDims, [
    { symbol: nz, node: 'select/NonZero', bound: 'n*3' },
    { symbol: best, node: 'best', bound: nz },
  ])
  t.same(r.values.get('nz')!.dims, [2, nz])
  t.same(r.values.get('values')!.dims, [best])
})

t.test('a concrete pass with sizes: those given (read, or the bound), a known k kept data-dependent when given', async (t) => {
  const atBound = inferGraph(graph, inputs(4), { concrete: true, dataDims: new Map([[nz, 12], [best, 12]]) })
  t.same(atBound.values.get('nz')!.dims, [2, 12], 'NonZero planned at its bound, 4 * 3')
  t.same(atBound.values.get('values')!.dims, [12], "TopK at its bound (the count's, 12), not at min(12, 5) though the pass knows it")
  const topK = atBound.steps.find((s) => s.node.name === 'best')!
  t.equal(topK.outputs.length, 3, 'TopK writes its size as a third output')
  t.same(topK.kernel!.ints.slice(3), [-1, 1], 'and reads k from its input')
  const read = inferGraph(graph, inputs(4), { concrete: true, dataDims: new Map([[nz, 7], [best, 5]]) })
  t.same(read.values.get('nz')!.dims, [2, 7])
  t.same(read.values.get('values')!.dims, [5])
  t.same(read.values.get('k')!.values, [5], 'k = min(7, 5) computed from the size read')
  const unnamed = inferGraph(graph, inputs(4), { concrete: true, dataDims: new Map() })
  t.same(unnamed.values.get('nz')!.dims, [2, 12], 'a size not given: NonZero at its bound')
  t.same(unnamed.values.get('values')!.dims, [5], 'and TopK at the k the pass knows')
})

t.test('a concrete pass without sizes refuses, naming the node and what to do', async (t) => {
  t.throws(() => inferGraph(graph, inputs(4), { concrete: true }), UnsupportedOperatorError)
  t.throws(() => inferGraph(graph, inputs(4), { concrete: true }), { message: /select\/NonZero.*open\(\)/ })
})

t.test('TopK with a constant k and NonZero of a constant are not data-dependent', async (t) => {
  const g: Graph = {
    ...graph,
    inputs: [{ name: 'x', dtype: 'float32', dims: [4, 3] }],
    initializers: new Map([...graph.initializers, ['c', { dtype: 'int64', dims: [2, 2], data: BigInt64Array.from([0n, 3n, 0n, 1n]) }]]),
    nodes: [node('nzc', 'NonZero', ['c'], ['nzc']), node('best', 'TopK', ['x', 'two'], ['values', 'indices'], { axis: 0 })],
  }
  const r = inferGraph(g, new Map([['x', { dtype: 'float32', dims: [4, 3] }]]), { concrete: false })
  t.same(r.dataDims, [])
  t.same(r.values.get('nzc')!.values, [0, 1, 1, 1], 'NonZero of a constant folds to its coordinates')
  t.same(r.values.get('values')!.dims, [2, 3])
})
