// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: SiLU / Swish as exporters write it, y = Mul(x, Sigmoid(x)) (either operand order),
// becomes one Sigmoid node that computes x * sigmoid(x) (the native Unary function 'swish'): one pass
// over x instead of two, and the sigmoid tensor never exists. EfficientNet-B0 has 49 such pairs,
// EfficientNetV2-S 132. The Sigmoid must have no other consumer and not be a graph output.
import { valueConsumers, type AttrValue, type Graph, type Node } from './ir.js'

/** Set (to 1) on a Sigmoid node that computes x * sigmoid(x). */
export const fusedSwishAttr = '_fused_swish'

export function isFusedSwish(node: Node): boolean {
  return node.attrs.get(fusedSwishAttr) === 1
}

/** Returns a graph where each Sigmoid -> Mul(x, sigmoid(x)) pair is one Sigmoid node with the Mul's output. */
export function fuseSwish(graph: Graph): Graph {
  const consumers = valueConsumers(graph)
  const outputs = new Set(graph.outputs.map((o) => o.name))
  const absorbed = new Set<Node>()
  const replaced = new Map<Node, Node>()
  for (const n of graph.nodes) {
    if (n.opType !== 'Sigmoid' || n.domain !== '' || n.inputs.length !== 1 || n.outputs.length !== 1 || isFusedSwish(n)) continue
    const x = n.inputs[0]!
    const s = n.outputs[0]!
    const users = consumers.get(s) ?? []
    if (outputs.has(s) || users.length !== 1) continue
    const mul = users[0]!
    if (mul.opType !== 'Mul' || mul.domain !== '' || mul.inputs.length !== 2 || mul.outputs.length !== 1) continue
    const [a, b] = mul.inputs
    if (!((a === x && b === s) || (a === s && b === x))) continue
    const attrs = new Map<string, AttrValue>(n.attrs)
    attrs.set(fusedSwishAttr, 1)
    replaced.set(n, { ...n, outputs: mul.outputs, attrs })
    absorbed.add(mul)
  }
  if (absorbed.size === 0) return graph
  return { ...graph, nodes: graph.nodes.filter((n) => !absorbed.has(n)).map((n) => replaced.get(n) ?? n) }
}
