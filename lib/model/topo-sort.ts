// SPDX-License-Identifier: Apache-2.0
// Orders nodes so every input is produced before use (ONNX requires it; some exporters slip).
import { ModelFormatError } from '../errors.js'
import type { Node } from './ir.js'

function alreadySorted(nodes: readonly Node[], available: Iterable<string>): boolean {
  const ready = new Set<string>(available)
  ready.add('')
  for (const n of nodes) {
    if (!n.inputs.every((x) => ready.has(x))) return false
    for (const o of n.outputs) ready.add(o)
  }
  return true
}

/** Nodes in an order where producers come first; file order is kept where it is already valid. */
export function sortNodes(nodes: readonly Node[], available: Iterable<string>, what: string): Node[] {
  if (alreadySorted(nodes, available)) return nodes.slice()
  // Kahn's algorithm over the producer relation, keeping file order among ready nodes.
  const producers = new Map<string, number>()
  nodes.forEach((n, i) => n.outputs.forEach((o) => producers.set(o, i)))
  const consumers = new Map<number, number[]>()
  const indegree = nodes.map((n, i) => {
    const deps = new Set<number>()
    for (const x of n.inputs) {
      const p = producers.get(x)
      if (p !== undefined && p !== i) deps.add(p)
    }
    for (const p of deps) consumers.set(p, [...(consumers.get(p) ?? []), i])
    return deps.size
  })
  const queue = nodes.map((_, i) => i).filter((i) => indegree[i] === 0)
  const order: Node[] = []
  for (let head = 0; head < queue.length; head++) {
    const i = queue[head]!
    order.push(nodes[i]!)
    for (const c of consumers.get(i) ?? []) if (--indegree[c]! === 0) queue.push(c)
  }
  if (order.length !== nodes.length) throw new ModelFormatError(`${what}: the graph has a cycle`)
  return order
}
