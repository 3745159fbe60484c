// SPDX-License-Identifier: Apache-2.0
// The memory layout of an elastic sub-model's plan (ExecutionPlan.buffers): the parts of the arena
// elastic-layout.ts places, each with the ops that take it. What every plan keeps (resident parameters,
// plan constants, the preload buffer) is taken for the whole run; the embedding rows until the
// embedding ops have read them; a staged shard from when its layer's job may start (the op its load
// waits for: the slot's previous layer) to the end of its layer, after which the next job may reuse it.
import type { LoadQueue, PlannedBuffer } from '../execution-plan.js'

/** A named byte range of the arena: [name, offset, bytes]. */
export type NamedRange = readonly [name: string, offset: number, bytes: number]

export interface ElasticParts {
  /** Resident parameters and plan constants. */
  readonly resident: readonly NamedRange[]
  readonly preloaded: readonly NamedRange[]
  /** The embedding rows region (on-demand embeddings only). */
  readonly rows?: NamedRange
  /** Per layer, its staged shard versions in job order (the layer's loads). */
  readonly staged: ReadonlyArray<readonly NamedRange[]>
  /** The sub-model program's activation buffers (region 1). */
  readonly activations: readonly PlannedBuffer[]
}

/** The op ranges of the program: embeddings [0, layerBegin[0]), layer k [layerBegin[k], layerEnd[k]). */
export interface LayerOps {
  readonly layerBegin: readonly number[]
  readonly layerEnd: readonly number[]
  readonly ops: number
}

export function elasticBuffers(parts: ElasticParts, loads: LoadQueue, jobStart: readonly number[], l: LayerOps): PlannedBuffer[] {
  const last = l.ops - 1
  const whole = (kind: 'resident' | 'preloaded') => ([name, offset, bytes]: NamedRange): PlannedBuffer => ({ kind, name, region: 0, offset, bytes, from: 0, to: last })
  const out = [...parts.resident.map(whole('resident')), ...parts.preloaded.map(whole('preloaded'))]
  if (parts.rows !== undefined) {
    const [name, offset, bytes] = parts.rows
    out.push({ kind: 'input-rows', name, region: 0, offset, bytes, from: 0, to: (l.layerBegin[0] ?? l.ops) - 1 })
  }
  parts.staged.forEach((shards, layer) =>
    shards.forEach(([name, offset, bytes], j) => {
      out.push({ kind: 'staged', name, region: 0, offset, bytes, from: loads.after[jobStart[layer]! + j]! + 1, to: l.layerEnd[layer]! - 1 })
    }),
  )
  return [...out, ...parts.activations]
}
