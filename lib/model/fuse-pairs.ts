// SPDX-License-Identifier: Apache-2.0
// What the pair fusions (fuse-residual.ts, fuse-conv-pool.ts, fuse-conv-depthwise.ts) share: finding the
// one node that reads a value, and rebuilding the graph once each first node has absorbed its second.
import type { Graph, Node } from './ir.js'

/**
 * For `graph`, a lookup of the node that alone reads a value: undefined when the value is a graph output
 * (it must stay whole) or has no reader or several.
 */
export function soleReaders(graph: Graph): (value: string) => Node | undefined {
  const readers = new Map<string, Node[]>()
  for (const n of graph.nodes) for (const x of n.inputs) readers.set(x, [...(readers.get(x) ?? []), n])
  const outputs = new Set(graph.outputs.map((o) => o.name))
  return (value) => {
    const users = readers.get(value) ?? []
    return outputs.has(value) || users.length !== 1 ? undefined : users[0]
  }
}

/** The pairs fused so far: each first node's replacement, and the second nodes it absorbed. */
export class PairFusions {
  private readonly replaced = new Map<Node, Node>()
  private readonly absorbed = new Set<Node>()

  /** `first` becomes `fused`, which computes `second` too. */
  fuse(first: Node, second: Node, fused: Node): void {
    this.replaced.set(first, fused)
    this.absorbed.add(second)
  }

  /** Whether `n` is part of a pair already (as either node). */
  has(n: Node): boolean {
    return this.replaced.has(n) || this.absorbed.has(n)
  }

  /** `graph` with every pair fused (the graph itself when there is none). */
  apply(graph: Graph): Graph {
    if (this.absorbed.size === 0) return graph
    return { ...graph, nodes: graph.nodes.filter((n) => !this.absorbed.has(n)).map((n) => this.replaced.get(n) ?? n) }
  }
}
