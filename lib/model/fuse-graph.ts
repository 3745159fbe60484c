// SPDX-License-Identifier: Apache-2.0
// The fusions an ONNX model gets before it runs: Sigmoid -> Mul pairs into one Swish, elementwise GELUs
// into one Gelu, a MatMul's bias Add into the MatMul, activations into their producers, then, where the
// (symbolic) shapes say so, residual Adds into their Conv, a stem and its max pool into bands of rows,
// and a conv and the depthwise 3x3 after it. Without shapes only the activations fuse.
import { fuseActivations } from './fuse-activations.js'
import { fuseConvDepthwise } from './fuse-conv-depthwise.js'
import { fuseConvPools } from './fuse-conv-pool.js'
import { fuseGelu } from './fuse-gelu.js'
import { fuseMatMulBias } from './fuse-matmul-bias.js'
import { fuseResidualAdds } from './fuse-residual.js'
import { fuseSwish } from './fuse-swish.js'
import { inferGraph, type FoldFn, type InferredGraph } from './infer-graph.js'
import type { Graph, ValueInfo } from './ir.js'

/**
 * The fused graph and its symbolic shape inference (undefined when the inputs' shapes are not all known,
 * or when shapes depend on input contents: `symbolic` then throws a ValueNeededError, passed through).
 */
export function fuseGraph(
  graph: Graph,
  inputs: ReadonlyMap<string, ValueInfo>,
  symbolic: (g: Graph) => InferredGraph | undefined,
): { readonly graph: Graph; readonly symbolic: InferredGraph | undefined } {
  let g = fuseActivations(fuseMatMulBias(fuseGelu(fuseSwish(graph))))
  let shapes = inputs.size === g.inputs.length ? symbolic(g) : undefined
  if (shapes === undefined) return { graph: g, symbolic: undefined }
  const passes: Array<(g: Graph, s: InferredGraph) => Graph> = [
    (x, s) => {
      const fused = fuseResidualAdds(x, s.values)
      return fused === x ? x : fuseActivations(fused) // a Relu after the Add fuses into the Conv too
    },
    (x, s) => fuseConvPools(x, s.values),
    (x, s) => fuseConvDepthwise(x, s.values),
  ]
  for (const pass of passes) {
    const next = pass(g, shapes)
    if (next === g) continue
    g = next
    shapes = symbolic(g)
    if (shapes === undefined) return { graph: g, symbolic: undefined }
  }
  return { graph: g, symbolic: shapes }
}

/** Symbolic shape inference for fuseGraph, folding constants with `fold` (cached in `foldCache`). */
export function symbolicShapes(inputs: ReadonlyMap<string, ValueInfo>, fold: FoldFn, foldCache: Map<string, ValueInfo[]>): (g: Graph) => InferredGraph {
  return (g) => inferGraph(g, inputs, { concrete: false, fold, foldCache })
}
