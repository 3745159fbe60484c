// SPDX-License-Identifier: Apache-2.0
// Pieces of the hand-made convolution graphs of the model tests: seeded weights, Conv nodes, seeded
// inputs, and the concrete inference (kernel calls) of a graph.
import { seededRandom } from '../../lib/cli/inputs.js'
import type { Test } from 'tap'
import { open, tensor, type Tensor } from '../../lib/index.js'
import { inferGraph, type InferredGraph } from '../../lib/model/infer-graph.js'
import type { Graph, ValueInfo } from '../../lib/model/ir.js'
import { parseOnnx } from '../../lib/model/onnx-import.js'
import { foldNative } from '../../lib/runtime/fold-native.js'
import { compareTensors } from './compare.js'
import { makeModel, type ModelSpec } from './make-model.js'
import { runOrt } from './ort.js'

/** An initializer maker drawing uniform values in [-scale, scale) from one seeded stream. */
export function seededWeights(seed: number): (name: string, dims: number[], scale?: number) => NonNullable<ModelSpec['initializers']>[number] {
  const rand = seededRandom(seed)
  return (name, dims, scale = 0.3) => ({ name, dims, floats: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => (rand() * 2 - 1) * scale) })
}

/**
 * x [1, 512] -> MatMul 512 x hidden -> Relu -> MatMul hidden x 512 -> Relu -> 4 x MatMul 512 x 512: two
 * large weights and four of 1 MiB, whose plans under a budget differ visibly. Weights from `weights`
 * (scales 0.05, `scale2`, 0.05).
 */
export function mlpModel(weights: ReturnType<typeof seededWeights>, hidden: number, scale2: number): Uint8Array {
  const small = [0, 1, 2, 3]
  return makeModel({
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 512] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w1', [512, hidden], 0.05), weights('w2', [hidden, 512], scale2), ...small.map((i) => weights(`s${i}`, [512, 512], 0.05))],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'w1'], outputs: ['h1'] },
      { op: 'Relu', inputs: ['h1'], outputs: ['a1'] },
      { op: 'MatMul', inputs: ['a1', 'w2'], outputs: ['h2'] },
      { op: 'Relu', inputs: ['h2'], outputs: ['a2'] },
      ...small.map((i) => ({ op: 'MatMul', inputs: [i === 0 ? 'a2' : `m${i - 1}`, `s${i}`], outputs: [i === 3 ? 'y' : `m${i}`] })),
    ],
  })
}

/** A 2-D Conv node `conv_<y>` with a k x k kernel, symmetric padding k / 2 unless given. */
export function convNode(x: string, w: string, b: string | undefined, y: string, k: number, opts: { group?: number; stride?: number; pad?: number } = {}): ModelSpec['nodes'][number] {
  return {
    op: 'Conv',
    inputs: b === undefined ? [x, w] : [x, w, b],
    outputs: [y],
    name: `conv_${y}`,
    ints: { kernel_shape: [k, k], pads: Array(4).fill(opts.pad ?? Math.floor(k / 2)), strides: [opts.stride ?? 1, opts.stride ?? 1] },
    int: { group: opts.group ?? 1 },
  }
}

/** A float32 tensor of uniform values in [-1, 1) from `seed`. */
export function seededInput(dims: number[], seed: number): Tensor {
  const x = tensor('float32', dims)
  const r = seededRandom(seed)
  const d = x.data as Float32Array
  for (let i = 0; i < d.length; i++) d[i] = r() * 2 - 1
  return x
}

/** The graph of a model with the one float32 input `x` of `dims`, and its concrete inference (steps with kernel calls). */
export function concreteGraph(model: Uint8Array, dims: number[]): { graph: Graph; inferred: InferredGraph } {
  const graph = parseOnnx(model, '.')
  const inputs = new Map<string, ValueInfo>([['x', { dtype: 'float32', dims }]])
  return { graph, inferred: inferGraph(graph, inputs, { concrete: true, fold: foldNative, foldCache: new Map() }) }
}

/**
 * Opens `path` at 1 and 2 threads and checks that the engine's graph has `fused` fused nodes (counted by
 * `count`) and that its output `y` equals onnxruntime's on the unfused model (within 1e-5).
 */
export async function fusedEnginesMatchOrt(
  t: Test, what: string, path: string, feeds: Record<string, Tensor>, count: (g: Graph) => number, fused = 1,
): Promise<void> {
  const want = await runOrt(path, feeds)
  for (const threads of [1, 2]) {
    const engine = await open(path, { threads })
    t.equal(count((engine as unknown as { graph: Graph }).graph), fused, `${what}: the engine runs the fused node (${threads} threads)`)
    const got = await engine.infer(feeds)
    await engine.close()
    const r = compareTensors(got.y!, want.y!, 1e-5, 1e-5)
    t.ok(r.ok, `${what}, ${threads} threads: max |diff| ${r.maxAbsDiff}${r.ok ? '' : ` (${r.reason})`}`)
  }
}
