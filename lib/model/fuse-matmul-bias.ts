// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: a Linear layer as exporters write it on a tensor of rank > 2, MatMul(x, W) with W a
// constant float32 [K, N] and then Add(y, b) with b a constant float32 [N] (either operand order; b
// may come through Identity nodes),
// becomes one MatMul with b as its third input: the GEMM adds b in its epilogue while the output tile
// is in registers (native/runtime/ops/nn_gemm.cc), one pass over Y instead of two. ConvNeXt's pointwise
// MLPs and transformers' projections are written so. The MatMul's output must have no other consumer
// and not be a graph output. A clamp after the Add (ReLU) then fuses into the MatMul too.
import { constantNodeValues } from './graph-constants.js'
import { valueConsumers, type Graph, type Node } from './ir.js'

/** Returns a graph where each MatMul -> Add(constant row) pair is one MatMul with a bias input. */
export function fuseMatMulBias(graph: Graph): Graph {
  const consumers = valueConsumers(graph)
  const constants = constantNodeValues(graph)
  const outputs = new Set(graph.outputs.map((o) => o.name))
  const identityOf = new Map<string, string>()
  for (const n of graph.nodes) if (n.opType === 'Identity' && n.domain === '' && n.inputs.length === 1) identityOf.set(n.outputs[0]!, n.inputs[0]!)
  // An initializer or a Constant node's value, also through Identity nodes (exporters give a shared bias one).
  const shapeOf = (name: string): { dtype: string; dims: readonly number[] } | undefined => {
    for (let v: string | undefined = name, hops = 0; v !== undefined && hops < 8; v = identityOf.get(v), hops++) {
      const t = graph.initializers.get(v) ?? constants.get(v)
      if (t !== undefined) return t
    }
    return undefined
  }
  const absorbed = new Set<Node>()
  const replaced = new Map<Node, Node>()
  for (const n of graph.nodes) {
    if (n.opType !== 'MatMul' || n.domain !== '' || n.inputs.length !== 2 || n.outputs.length !== 1) continue
    const w = shapeOf(n.inputs[1]!)
    if (w === undefined || w.dtype !== 'float32' || w.dims.length !== 2) continue
    const y = n.outputs[0]!
    const users = consumers.get(y) ?? []
    if (outputs.has(y) || users.length !== 1) continue
    const add = users[0]!
    if (add.opType !== 'Add' || add.domain !== '' || add.inputs.length !== 2 || add.outputs.length !== 1) continue
    const bias = add.inputs[0] === y ? add.inputs[1]! : add.inputs[0]!
    if (bias === y) continue
    const b = shapeOf(bias)
    if (b === undefined || b.dtype !== 'float32' || b.dims.length !== 1 || b.dims[0] !== w.dims[1]) continue
    // In the Add's place: after the bias's producer too (an Identity may come after the MatMul).
    replaced.set(add, { ...n, inputs: [...n.inputs, bias], outputs: add.outputs })
    absorbed.add(n)
  }
  if (absorbed.size === 0) return graph
  return { ...graph, nodes: graph.nodes.filter((n) => !absorbed.has(n)).map((n) => replaced.get(n) ?? n) }
}
