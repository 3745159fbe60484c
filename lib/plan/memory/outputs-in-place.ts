// SPDX-License-Identifier: Apache-2.0
// Graph outputs written straight into the caller's arrays. infer() returns every output in a fresh
// TypedArray; an output that lived in the arena as well was held twice while the run copied it out
// (GPT-2's 25.7 MB logits: 51 MB of peak for one output). The op that produces such an output writes
// it into the array infer() will return instead (native/runtime/program.h, region 2 + k), so it takes
// no arena bytes and needs no copy; a memory budget counts the returned arrays once (budgetReserve).
//
// An output qualifies when one op computes it whole: produced by a kernel step (not a Concat run in
// place, not one of its blocks), or a chain of reshape aliases of such a value (GPT-2's logits reshape
// its Gemm's output) where each value is aliased by the next one only. No value of the chain may be a
// graph input, a constant, another output or itself aliased further; the output is listed once. The
// others are copied out as before. Every value of a chain maps to the output's buffer.
import type { Graph, ValueInfo } from '../../model/ir.js'
import type { InferredGraph } from '../../model/infer-graph.js'
import type { ConcatsInPlace } from './concat-in-place.js'

/**
 * Value name -> k, the index of the buffer it is written in among the run's output buffers: the graph
 * outputs that `copiedOut(name)` says are returned from a program tensor (not a constant, not an input
 * passed through), in graph order. Qualifying outputs and the values they reshape are in the map; a
 * run passes a buffer for every copied output.
 */
export function outputsInPlace(
  graph: Graph,
  inferred: InferredGraph,
  concats: ConcatsInPlace,
  isActivation: (v: ValueInfo) => boolean,
  copiedOut: (name: string) => boolean,
): ReadonlyMap<string, number> {
  const produced = new Set<string>()
  const aliasSource = new Map<string, string>()
  const aliases = new Map<string, number>() // value -> steps that alias it
  inferred.steps.forEach((step, k) => {
    if (step.aliasOf !== undefined) {
      const src = step.node.inputs[step.aliasOf]!
      aliasSource.set(step.node.outputs[0]!, src)
      aliases.set(src, (aliases.get(src) ?? 0) + 1)
      return
    }
    const call = step.kernel
    if (call === undefined || concats.steps.has(k)) return
    const n = call.outputs ?? step.outputs.length
    for (let i = 0; i < n; i++) {
      const name = step.node.outputs[i] ?? ''
      if (name !== '') produced.add(name)
    }
  })
  const inputs = new Set(graph.inputs.map((d) => d.name))
  const counts = new Map<string, number>()
  for (const o of graph.outputs) counts.set(o.name, (counts.get(o.name) ?? 0) + 1)
  const plain = (name: string): boolean => {
    const v = inferred.values.get(name)
    return v !== undefined && isActivation(v) && !inputs.has(name) && !concats.blocks.has(name)
  }
  // The values an output's buffer holds: itself and the values it reshapes, back to the op's output.
  const chainOf = (output: string): string[] | undefined => {
    if (counts.get(output) !== 1 || aliases.has(output) || !plain(output)) return undefined
    const chain = [output]
    for (let src = aliasSource.get(output); src !== undefined; src = aliasSource.get(src)) {
      if (aliases.get(src) !== 1 || counts.has(src) || !plain(src)) return undefined
      chain.push(src)
    }
    return produced.has(chain[chain.length - 1]!) ? chain : undefined
  }
  const out = new Map<string, number>()
  let k = 0
  for (const o of graph.outputs) {
    if (!copiedOut(o.name)) continue
    for (const name of chainOf(o.name) ?? []) out.set(name, k)
    k++
  }
  return out
}
