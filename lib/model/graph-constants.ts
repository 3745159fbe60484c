// SPDX-License-Identifier: Apache-2.0
// Host constants a graph rewrite may read: initializers and Constant nodes' values, and scalars of them.
import { isExternal, type Graph, type TensorData } from './ir.js'

/** The value of every Constant node (by its output name) that holds a tensor. */
export function constantNodeValues(graph: Graph): Map<string, TensorData> {
  const constants = new Map<string, TensorData>()
  for (const n of graph.nodes) {
    const value = n.attrs.get('value')
    if (n.opType === 'Constant' && value !== undefined && typeof value === 'object' && !Array.isArray(value)) {
      constants.set(n.outputs[0] ?? '', value)
    }
  }
  return constants
}

/** A value's host tensor (a Constant node's or an initializer in memory), if it has one. */
export function constantOf(graph: Graph, constants: ReadonlyMap<string, TensorData>, name: string): TensorData | undefined {
  const t = constants.get(name) ?? graph.initializers.get(name)
  return t === undefined || isExternal(t) ? undefined : t
}

/** The float32 scalar (one element, any rank) a value holds, if it is a constant. */
export function scalarOf(graph: Graph, constants: ReadonlyMap<string, TensorData>, name: string): number | undefined {
  const t = constantOf(graph, constants, name)
  if (t === undefined || t.data.length !== 1 || t.dtype !== 'float32') return undefined
  return Number(t.data[0])
}
