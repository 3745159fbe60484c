// SPDX-License-Identifier: Apache-2.0
// A graph with some of its symbolic input dims bound to values: the planners that need concrete shapes
// (a memory-budget plan at a range's ceiling, a program at one input shape) run on this graph, while the
// package keeps the symbolic one.
import type { Graph } from './ir.js'

/** `graph` with every input dim named in `values` replaced by its value (other dims stay as they are). */
export function bindInputDims(graph: Graph, values: ReadonlyMap<string, number>): Graph {
  const inputs = graph.inputs.map((d) => (d.dims === undefined ? d : { ...d, dims: d.dims.map((x) => (typeof x === 'string' && values.has(x) ? values.get(x)! : x)) }))
  return { ...graph, inputs }
}

/** The symbolic dims of the graph's inputs, in first-seen order. */
export function inputSymbols(graph: Graph): string[] {
  return [...new Set(graph.inputs.flatMap((d) => (d.dims ?? []).filter((x): x is string => typeof x === 'string')))]
}
