// SPDX-License-Identifier: Apache-2.0
// Turns a planner's layout into the ElasticPlan every planner returns (and the executor runs).
import { accumulatedBudgets, ledgerOf } from './aib.js'
import type { Layout } from './layout.js'
import { bytesAt, type Model } from './profile.js'
import { timelineOf } from './simulate.js'
import type { ElasticPlan, ElasticPlanner, ElasticSchedule, PlannedShard, PreloadEntry } from './types.js'

export interface PlanMeta {
  readonly planner: ElasticPlanner
  readonly schedule: ElasticSchedule
  readonly targetMs: number
  readonly uniformBi: number
  /** What the preload buffer holds; default: the layout's preloaded shards in layer order. */
  readonly preload?: readonly PreloadEntry[]
}

function shardsOf(model: Model, layout: Layout): PlannedShard[][] {
  const rows: PlannedShard[][] = []
  for (let k = 0; k < layout.depth; k++) {
    const row: PlannedShard[] = []
    for (let i = k * layout.width; i < (k + 1) * layout.width; i++) {
      const [shard, bi] = [layout.shard[i]!, layout.bi[i]!]
      row.push({ shard, bits: model.bitwidths[bi]!, preloaded: layout.preloaded[i] === 1, bytes: bytesAt(model, k, shard, bi) })
    }
    rows.push(row)
  }
  return rows
}

/** The whole N x M model at one bitwidth index, in layer order (PreloadModel's buffer). */
export function wholeModel(model: Model, bi: number): PreloadEntry[] {
  const out: PreloadEntry[] = []
  for (let layer = 0; layer < model.layers; layer++) {
    for (let shard = 0; shard < model.shardsPerLayer; shard++) {
      out.push({ layer, shard, bits: model.bitwidths[bi]!, bytes: bytesAt(model, layer, shard, bi) })
    }
  }
  return out
}

export function buildPlan(model: Model, layout: Layout, meta: PlanMeta): ElasticPlan {
  const shards = shardsOf(model, layout)
  const flat = shards.flatMap((row, layer) => row.map((s) => ({ ...s, layer })))
  const preload = meta.preload ?? flat.filter((s) => s.preloaded).map(({ layer, shard, bits, bytes }) => ({ layer, shard, bits, bytes }))
  const bitsHistogram: Record<number, number> = {}
  for (const bits of model.bitwidths) bitsHistogram[bits] = 0
  for (const s of flat) bitsHistogram[s.bits] = (bitsHistogram[s.bits] ?? 0) + 1
  const l = ledgerOf(model, layout, meta.targetMs)
  return {
    planner: meta.planner,
    schedule: meta.schedule,
    targetMs: meta.targetMs,
    depth: layout.depth,
    width: layout.width,
    shards,
    preload,
    preloadBytes: preload.reduce((sum, e) => sum + e.bytes, 0),
    uniformBits: model.bitwidths[meta.uniformBi]!,
    aib: Array.from(accumulatedBudgets(l.startMs, l.computeMs, l.debits)),
    modelledMs: timelineOf(model, layout, meta.schedule).totalMs,
    loadBytes: flat.reduce((sum, s) => sum + (s.preloaded ? 0 : s.bytes), 0),
    bitsHistogram,
  }
}
