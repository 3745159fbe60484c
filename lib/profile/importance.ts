// SPDX-License-Identifier: Apache-2.0
// The shard importance an elastic package records (lib/prepare/shard-importance.ts measures it): the
// ranking the planner upgrades shards in, and the accuracy tables it weighs sub-models with.
import type { EncoderConfig } from '../model/encoder-config.js'
import type { MeasuredAccuracy, RankedImportance, ShardRef } from '../plan/elastic/index.js'
import { isFiniteGrid } from '../plan/elastic/profile.js'

/**
 * The accuracies of a package's importance profile (dev-set.ts profileImportance: `accuracy[l][h]` with
 * that shard alone at the highest bitwidth, `lowAccuracy`, `fullAccuracy`, and `subModelAccuracy` when
 * measured at the package's `bitwidths`), or undefined when it has none or not of this shape (the
 * planner then assumes more bits are never worse, as the seed does). A table of another shape or other
 * bitwidths is left out.
 */
export function measuredAccuracy(importance: unknown, layers: number, heads: number, bitwidths: readonly number[]): MeasuredAccuracy | undefined {
  const i = importance as { accuracy?: unknown; lowAccuracy?: unknown; fullAccuracy?: unknown; subModelAccuracy?: unknown; bitwidths?: unknown } | undefined
  const table = i?.accuracy
  const lowest = i?.lowAccuracy
  const highest = i?.fullAccuracy
  if (typeof lowest !== 'number' || typeof highest !== 'number' || !Number.isFinite(lowest) || !Number.isFinite(highest)) return undefined
  if (!isFiniteGrid(table, [layers, heads])) return undefined
  const gain = (table as number[][]).map((r) => r.map((a) => a - lowest))
  // The sub-model table, when it was measured at the package's bitwidths and has their shape.
  const t = i?.subModelAccuracy
  const b = i?.bitwidths
  const sameBits = Array.isArray(b) && b.length === bitwidths.length && b.every((x, k) => x === bitwidths[k])
  const subModels = sameBits && isFiniteGrid(t, [layers, heads, bitwidths.length]) ? { subModels: t as number[][][] } : {}
  return { lowest, highest, gain, ...subModels }
}

/** Every shard in layer order: the ranking of a package whose importance was not profiled. */
export function layerOrder(c: EncoderConfig): ShardRef[] {
  const out: ShardRef[] = []
  for (let l = 0; l < c.layers; l++) for (let h = 0; h < c.heads; h++) out.push({ layer: l, shard: h })
  return out
}

/** The planner's importance: the package's ranking and accuracy tables, else layer order (and whether it was profiled). */
export function rankedImportance(meta: Readonly<Record<string, unknown>>, c: EncoderConfig, bitwidths: readonly number[]): { readonly importance: RankedImportance; readonly profiled: boolean } {
  const imp = meta.importance as { ranking?: Array<[number, number]> } | undefined
  const ranking = Array.isArray(imp?.ranking) ? imp!.ranking.map(([layer, shard]) => ({ layer, shard })) : undefined
  const accuracy = measuredAccuracy(meta.importance, c.layers, c.heads, bitwidths)
  return { importance: { ranking: ranking ?? layerOrder(c), ...(ranking && accuracy ? { accuracy } : {}) }, profiled: ranking !== undefined }
}
