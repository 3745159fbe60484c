// SPDX-License-Identifier: Apache-2.0
// Graph rewrite: a Conv, Gemm or MatMul whose only consumer is a clamp-like
// activation (Relu, Clip with constant bounds) absorbs it, so the kernel applies the clamp while the
// output tile is still in registers and the intermediate tensor never exists (onnxruntime's
// Conv+Activation fusion). The fused node keeps its name and gets the activation's output; the
// clamp travels as the attributes below, which the op definitions turn into the kernel's epilogue.
import type { AttrValue, Graph, Node, TensorData } from './ir.js'
import { valueConsumers } from './ir.js'
import { attrFloat } from './attrs.js'
import { constantNodeValues, scalarOf } from './graph-constants.js'

/** Attribute names carrying a fused clamp: y = min(max(x, min), max). */
export const fusedMinAttr = '_fused_clamp_min'
export const fusedMaxAttr = '_fused_clamp_max'

/** Ops whose kernels apply a clamp epilogue (nn-conv.ts and nn-matmul.ts read the attributes). */
const producers = new Set(['Conv', 'Gemm', 'MatMul'])

/** The clamp bounds of an activation node, or undefined if it is not a constant clamp. */
function clampOf(graph: Graph, constants: ReadonlyMap<string, TensorData>, n: Node): [number, number] | undefined {
  if (n.opType === 'Relu') return [0, Infinity]
  if (n.opType !== 'Clip') return undefined
  if (graph.opset < 11) return [attrFloat(n, 'min', -Infinity), attrFloat(n, 'max', Infinity)]
  const lo = n.inputs[1] ? scalarOf(graph, constants, n.inputs[1]) : -Infinity
  const hi = n.inputs[2] ? scalarOf(graph, constants, n.inputs[2]) : Infinity
  return lo === undefined || hi === undefined ? undefined : [lo, hi]
}

/** Returns a graph where each producer → clamp pair with no other consumer is one node. */
export function fuseActivations(graph: Graph): Graph {
  const consumers = valueConsumers(graph)
  const constants = constantNodeValues(graph)
  const outputs = new Set(graph.outputs.map((o) => o.name))
  const absorbed = new Set<Node>()
  const replaced = new Map<Node, Node>()
  for (const n of graph.nodes) {
    if (!producers.has(n.opType) || n.domain !== '' || n.outputs.length !== 1) continue
    const out = n.outputs[0]!
    const users = consumers.get(out) ?? []
    if (outputs.has(out) || users.length !== 1) continue
    const act = users[0]!
    const clamp = act.domain === '' && act.inputs[0] === out ? clampOf(graph, constants, act) : undefined
    if (clamp === undefined) continue
    const attrs = new Map<string, AttrValue>(n.attrs)
    attrs.set(fusedMinAttr, clamp[0])
    attrs.set(fusedMaxAttr, clamp[1])
    replaced.set(n, { ...n, outputs: act.outputs.slice(0, 1), attrs })
    absorbed.add(act)
  }
  if (absorbed.size === 0) return graph
  const nodes = graph.nodes.filter((n) => !absorbed.has(n)).map((n) => replaced.get(n) ?? n)
  return { ...graph, nodes }
}

/** The fused clamp of a node, if the fusion pass gave it one. */
export function fusedClamp(node: Node): { min: number; max: number } | undefined {
  const min = node.attrs.get(fusedMinAttr)
  const max = node.attrs.get(fusedMaxAttr)
  if (typeof min !== 'number' || typeof max !== 'number') return undefined
  return { min, max }
}
