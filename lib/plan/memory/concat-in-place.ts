// SPDX-License-Identifier: Apache-2.0
// Concatenation without a copy: when a Concat's inputs are contiguous blocks of its output (every dim
// before the axis is 1, e.g. channels of one image) and each input is an activation only that Concat
// reads, its producers write straight into their block of the Concat's buffer and the Concat step
// runs no op. SqueezeNet's fire modules concatenate their two expand convolutions so; copying them
// cost 0.3-0.4 ms per run at 1 thread (bench/models/profile.ts), and the copy kept both the blocks and
// the output alive (SqueezeNet's largest activation set under a memory budget). The program builders
// place the blocks: program-builder.ts, and budget-program.ts for memory-budgeted programs.
import type { Graph, ValueInfo } from '../../model/ir.js'
import { valueBytes } from '../../model/ir.js'
import type { InferredGraph } from '../../model/infer-graph.js'

export interface ConcatsInPlace {
  /** Input value -> the Concat output it is a block of, and the block's byte offset. */
  readonly blocks: ReadonlyMap<string, { readonly output: string; readonly byteOffset: number }>
  /** Indexes of the Concat steps that need no op. */
  readonly steps: ReadonlySet<number>
}

/**
 * The Concats of `inferred` that can run in place. `isActivation(v)` says whether a value is computed at
 * run time (not a constant); graph inputs and outputs are never blocks (inputs are copied in by the
 * caller, outputs are read whole), nor are values read by any other step, values aliased by a reshape,
 * or values a Concat in place writes (no nesting). With `only`, just the Concats whose outputs it names
 * (a program at one shape of a range keeps the in-place Concats of the plan made at the range's ceiling).
 */
export function concatsInPlace(graph: Graph, inferred: InferredGraph, isActivation: (v: ValueInfo) => boolean, only?: ReadonlySet<string>): ConcatsInPlace {
  const readers = new Map<string, number>()
  const producedByKernel = new Set<string>()
  for (const step of inferred.steps) {
    const read = step.aliasOf !== undefined ? [step.node.inputs[step.aliasOf]!] : (step.kernel?.inputs ?? []).map((i) => (i < 0 ? '' : (step.node.inputs[i] ?? '')))
    for (const name of new Set(read)) if (name !== '') readers.set(name, (readers.get(name) ?? 0) + 1)
    if (step.kernel !== undefined && step.aliasOf === undefined) for (const o of step.node.outputs) if (o !== '') producedByKernel.add(o)
  }
  const boundary = new Set([...graph.inputs.map((d) => d.name), ...graph.outputs.map((o) => o.name)])
  const blocks = new Map<string, { output: string; byteOffset: number }>()
  const steps = new Set<number>()
  const placedOutputs = new Set<string>()
  inferred.steps.forEach((step, k) => {
    const call = step.kernel
    if (call?.op !== 'Concat' || step.aliasOf !== undefined) return
    const out = step.node.outputs[0]!
    if (only !== undefined && !only.has(out)) return
    const dims = step.outputs[0]!.dims
    const axis = call.ints[0]!
    if (dims.slice(0, axis).some((d) => d !== 1)) return
    const names = call.inputs.map((i) => step.node.inputs[i] ?? '')
    const ok = names.every((name) => {
      const v = inferred.values.get(name)
      return name !== '' && v !== undefined && isActivation(v) && !boundary.has(name) && readers.get(name) === 1 &&
        producedByKernel.has(name) && !placedOutputs.has(name) && !blocks.has(name)
    })
    if (!ok || new Set(names).size !== names.length || blocks.has(out)) return
    let byteOffset = 0
    for (const name of names) {
      const v = inferred.values.get(name)!
      blocks.set(name, { output: out, byteOffset })
      byteOffset += valueBytes(v)
    }
    placedOutputs.add(out)
    steps.add(k)
  })
  return { blocks, steps }
}
