// SPDX-License-Identifier: Apache-2.0
// The cone of a graph above some values: the nodes they depend on. A shape's constants (values that
// fold to constants and depend on the input shapes, such as BERT's token-type embeddings expanded to
// the length) are recomputed per shape by inferring this cone alone. Pure.
import type { Graph, Node } from '../../model/ir.js'

/** The graph cut down to the nodes the named values depend on, and the initializers they read. */
export function coneOf(graph: Graph, names: readonly string[]): Graph {
  const producer = new Map<string, Node>()
  for (const n of graph.nodes) for (const o of n.outputs) producer.set(o, n)
  const keep = new Set<Node>()
  const stack = [...names]
  while (stack.length > 0) {
    const n = producer.get(stack.pop()!)
    if (n === undefined || keep.has(n)) continue
    keep.add(n)
    stack.push(...n.inputs.filter((x) => x !== ''))
  }
  const nodes = graph.nodes.filter((n) => keep.has(n))
  const read = new Set(nodes.flatMap((n) => n.inputs))
  return { ...graph, nodes, initializers: new Map([...graph.initializers].filter(([n]) => read.has(n))) }
}
