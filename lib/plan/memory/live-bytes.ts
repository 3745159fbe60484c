// SPDX-License-Identifier: Apache-2.0
// Activation bytes live at each step of a program: the lower bound of every memory plan of it.
import type { InferredGraph } from '../../model/infer-graph.js'
import { valueBytes, type Graph } from '../../model/ir.js'
import type { ConcatsInPlace } from './concat-in-place.js'

/**
 * Activation bytes live at each step of the inferred graph (aliases share their source's bytes, as do
 * the blocks of a Concat in place, `concats`, which budget-program.ts places so); the `hostOutputs` are
 * written into the caller's arrays and take none.
 */
export function liveBytesPerStep(graph: Graph, inferred: InferredGraph, isConstant: (name: string) => boolean, concats: ConcatsInPlace, hostOutputs: ReadonlyMap<string, number> = new Map()): Float64Array {
  const steps = inferred.steps
  const root = new Map<string, string>()
  for (const [name, block] of concats.blocks) root.set(name, block.output)
  const span = new Map<string, { bytes: number; first: number; last: number }>()
  const touch = (name: string, k: number): void => {
    if (name === '' || isConstant(name) || hostOutputs.has(name)) return
    const r = root.get(name) ?? name
    const v = inferred.values.get(r)
    if (v === undefined) return
    const s = span.get(r)
    if (s === undefined) {
      span.set(r, { bytes: valueBytes(v), first: k, last: k })
    } else {
      s.first = Math.min(s.first, k)
      s.last = Math.max(s.last, k)
    }
  }
  for (const d of graph.inputs) touch(d.name, -1)
  steps.forEach((step, k) => {
    if (step.aliasOf !== undefined) {
      const src = step.node.inputs[step.aliasOf]!
      touch(src, k)
      root.set(step.node.outputs[0]!, root.get(src) ?? src)
      return
    }
    step.node.inputs.forEach((n) => touch(n, k))
    step.node.outputs.forEach((n) => touch(n, k))
  })
  for (const o of graph.outputs) touch(o.name, steps.length)
  const diff = new Float64Array(steps.length + 3)
  for (const s of span.values()) {
    const from = Math.max(0, s.first + 1)
    const to = Math.min(steps.length + 1, s.last + 1) + 1
    diff[from] = diff[from]! + s.bytes
    diff[to] = diff[to]! - s.bytes
  }
  const live = new Float64Array(steps.length)
  let acc = diff[0]!
  for (let k = 0; k < steps.length; k++) {
    acc += diff[k + 1]!
    live[k] = acc
  }
  return live
}
