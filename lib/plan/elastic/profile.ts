// SPDX-License-Identifier: Apache-2.0
// An ElasticProfile checked and flattened (the shard-size table as one array), plus argument checks.
import { ArgumentError } from '../../errors.js'
import type { ElasticOptions, ElasticProfile, MeasuredAccuracy, ShardRef } from './types.js'

export interface Model {
  /** N */
  readonly layers: number
  /** M */
  readonly shardsPerLayer: number
  readonly bitwidths: readonly number[]
  /** Bytes of shard (layer, shard) at bitwidths[bi]: bytes[(layer * M + shard) * K + bi]. */
  readonly bytes: Float64Array
  readonly readMsPerByte: number
  readonly readMsPerJob: number
  readonly computeMs: readonly number[]
  readonly fixedMs: number
}

const isTime = (x: number): boolean => Number.isFinite(x) && x >= 0
const show = (x: unknown): string => (Array.isArray(x) ? `[${x.join(', ')}]` : String(x))

function checkShape(p: ElasticProfile): void {
  for (const key of ['layers', 'shardsPerLayer'] as const) {
    if (!Number.isSafeInteger(p[key]) || p[key] < 1) throw new ArgumentError(`profile.${key}: expected integer >= 1, got ${show(p[key])}`)
  }
  const b = p.bitwidths
  if (!Array.isArray(b) || b.length === 0 || b.some((x, i) => !Number.isInteger(x) || x < 1 || x > 32 || (i > 0 && x <= b[i - 1]!)))
    throw new ArgumentError(`profile.bitwidths: expected ascending distinct integers 1..32, got ${show(b)}`)
  for (const key of ['readMsPerByte', 'readMsPerJob', 'fixedMs'] as const) {
    if (!isTime(p[key])) throw new ArgumentError(`profile.${key}: expected finite number >= 0, got ${show(p[key])}`)
  }
  const c = p.layerComputeMs
  const M = p.shardsPerLayer
  if (!Array.isArray(c) || c.length !== M + 1 || c.slice(1).some((x) => !isTime(x)))
    throw new ArgumentError(
      `profile.layerComputeMs: expected ${M + 1} entries (index m = a layer of m shards) with 1..${M} finite >= 0, got ${show(c)}`,
    )
}

function tableEntry(p: ElasticProfile, layer: number, shard: number, bi: number): number {
  const t = p.shardBytes
  if (typeof t === 'function') return t(p.bitwidths[bi]!, layer, shard)
  const row = t[layer]?.[shard]
  if (!Array.isArray(row) || row.length !== p.bitwidths.length)
    throw new ArgumentError(`profile.shardBytes[${layer}][${shard}]: expected ${p.bitwidths.length} sizes (one per bitwidth), got ${show(row)}`)
  return row[bi]!
}

/** Checks a profile and flattens its shard sizes. Throws ArgumentError naming the bad field. */
export function modelOf(p: ElasticProfile): Model {
  checkShape(p)
  const N = p.layers
  const M = p.shardsPerLayer
  const K = p.bitwidths.length
  if (typeof p.shardBytes !== 'function' && (!Array.isArray(p.shardBytes) || p.shardBytes.length !== N))
    throw new ArgumentError(`profile.shardBytes: expected a function or a table of ${N} layers, got ${typeof p.shardBytes}`)
  const bytes = new Float64Array(N * M * K)
  for (let layer = 0; layer < N; layer++) {
    for (let shard = 0; shard < M; shard++) {
      for (let bi = 0; bi < K; bi++) {
        const x = tableEntry(p, layer, shard, bi)
        if (!Number.isSafeInteger(x) || x < 0)
          throw new ArgumentError(
            `profile.shardBytes: expected integer >= 0 for layer ${layer}, shard ${shard}, ${p.bitwidths[bi]} bits, got ${x}`,
          )
        bytes[(layer * M + shard) * K + bi] = x
      }
    }
  }
  const { readMsPerByte, readMsPerJob, fixedMs } = p
  const [bitwidths, computeMs] = [[...p.bitwidths], [...p.layerComputeMs]]
  return { layers: N, shardsPerLayer: M, bitwidths, bytes, readMsPerByte, readMsPerJob, computeMs, fixedMs }
}

export function bytesAt(model: Model, layer: number, shard: number, bi: number): number {
  return model.bytes[(layer * model.shardsPerLayer + shard) * model.bitwidths.length + bi]!
}

/** Index of `bits` in the profile's bitwidths; ArgumentError (naming `what`) when absent. */
export function bitsIndex(model: Model, bits: number, what: string): number {
  const bi = model.bitwidths.indexOf(bits)
  if (bi < 0) throw new ArgumentError(`${what}: expected one of the profile's bitwidths ${show(model.bitwidths)}, got ${show(bits)}`)
  return bi
}

export function checkTarget(targetMs: number): void {
  if (!isTime(targetMs)) throw new ArgumentError(`targetMs: expected finite number >= 0, got ${show(targetMs)}`)
}

export interface Resolved {
  readonly targetMs: number
  readonly preloadBytes: number
  readonly preloadBi: number
}

/** Checks the planElastic options and fills in the defaults (no preload; the highest bitwidth below 32). */
export function resolveOptions(model: Model, options: ElasticOptions): Resolved {
  checkTarget(options.targetMs)
  const P = options.preloadBytes ?? 0
  if (!(P >= 0) || (!Number.isSafeInteger(P) && P !== Infinity))
    throw new ArgumentError(`preloadBytes: expected integer >= 0 or Infinity, got ${show(P)}`)
  const quantized = model.bitwidths.filter((b) => b < 32)
  const fallback = quantized.length > 0 ? quantized[quantized.length - 1]! : model.bitwidths[model.bitwidths.length - 1]!
  const preloadBi = bitsIndex(model, options.preloadBits ?? fallback, 'preloadBits')
  return { targetMs: options.targetMs, preloadBytes: P, preloadBi }
}

/**
 * The visiting order of IO pass 2 as flat shard indices (layer * M + shard): the ranking, most
 * important first, then the shards it leaves out in layer order (so a partial ranking still spends
 * the whole budget).
 */
export function rankingOf(model: Model, importance: readonly ShardRef[]): number[] {
  const seen = new Set<number>()
  const order = importance.map((r, i) => {
    const ok = Number.isInteger(r?.layer) && Number.isInteger(r?.shard) && r.layer >= 0 && r.shard >= 0
    if (!ok || r.layer >= model.layers || r.shard >= model.shardsPerLayer) {
      const want = `{ layer: 0..${model.layers - 1}, shard: 0..${model.shardsPerLayer - 1} }`
      throw new ArgumentError(`importance[${i}]: expected ${want}, got ${JSON.stringify(r)}`)
    }
    const flat = r.layer * model.shardsPerLayer + r.shard
    if (seen.has(flat)) throw new ArgumentError(`importance[${i}]: layer ${r.layer} shard ${r.shard} is ranked twice`)
    seen.add(flat)
    return flat
  })
  for (let flat = 0; flat < model.layers * model.shardsPerLayer; flat++) if (!seen.has(flat)) order.push(flat)
  return order
}

/** Whether x is a nested array of finite numbers with exactly these dimensions (e.g. [layers, shards]). */
export function isFiniteGrid(x: unknown, dims: readonly number[]): boolean {
  if (dims.length === 0) return typeof x === 'number' && Number.isFinite(x)
  return Array.isArray(x) && x.length === dims[0] && x.every((y) => isFiniteGrid(y, dims.slice(1)))
}

/** What IO planning may spend bits on, from the measured accuracies (io-plan.ts). */
export interface AccuracyRule {
  /** Pass 1 may raise the uniform bitwidth above the lowest. */
  readonly uniform: boolean
  /** Pass 2 may raise flat shard i (layer * M + shard). */
  readonly raise: (flat: number) => boolean
  /** The measured accuracy of every sub-model at every bitwidth, when the profile has it. */
  readonly subModels?: (depth: number, width: number, bi: number) => number
}

/**
 * Without measured accuracies, the seed's assumption that more bits are never less accurate: every
 * raise allowed. With them, pass 1 raises the uniform bitwidth only if the model at the highest
 * bitwidth measured more accurate than at the lowest, and pass 2 visits only shards whose own raise
 * measured a gain (> 0): reads that buy no measured accuracy are not made. A table of every sub-model's
 * accuracy at every bitwidth (subModels) is checked and passed on for accuracy-plan.ts.
 */
export function accuracyRule(model: Model, a: MeasuredAccuracy | undefined): AccuracyRule {
  if (a === undefined) return { uniform: true, raise: () => true }
  const M = model.shardsPerLayer
  const ok = Number.isFinite(a.lowest) && Number.isFinite(a.highest) && isFiniteGrid(a.gain, [model.layers, M])
  if (!ok) throw new ArgumentError(`accuracy: expected finite lowest, highest and gain[${model.layers}][${M}]`)
  const rule = { uniform: a.highest > a.lowest, raise: (flat: number) => a.gain[Math.floor(flat / M)]![flat % M]! > 0 }
  const t = a.subModels
  if (t === undefined) return rule
  const K = model.bitwidths.length
  if (!isFiniteGrid(t, [model.layers, M, K]))
    throw new ArgumentError(`accuracy.subModels: expected [${model.layers}][${M}][${K}] finite accuracies (depth, width, bitwidth), got another shape`)
  return { ...rule, subModels: (depth, width, bi) => t[depth - 1]![width - 1]![bi]! }
}
