// SPDX-License-Identifier: Apache-2.0
// Elastic-planning test support: random device profiles (FPQ1 shard sizes), rankings and reference checks.
import type { ElasticPlan, ElasticProfile, PlanShape, ShardRef } from '../../lib/plan/elastic/index.js'
import { prng } from './plan-problems.js'

/** Bytes of an FPQ1 blob (notes/elastic-spec.md section 3); bits 32 is the raw fp32 rows. */
export function shardBlobBytes(count: number, bits: number, outliers: number): number {
  if (bits === 32) return 4 * count
  return 32 + 4 * 2 ** bits + 8 * outliers + Math.ceil(Math.ceil((count * bits) / 8) / 4) * 4
}

export interface RandomCase {
  readonly seed: number
  readonly profile: ElasticProfile
  readonly importance: readonly ShardRef[]
  /** Every shard of a bitwidth has the same size (shardBytes is a function of the bitwidth). */
  readonly uniformSizes: boolean
  /** Compute of the full model plus the fixed part: a scale for targets. */
  readonly fullComputeMs: number
}

const int = (rand: () => number, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

function randomBitwidths(rand: () => number): number[] {
  if (rand() < 0.7) return [2, 3, 4, 5, 6, 32]
  const pool = [1, 2, 3, 4, 5, 6, 7, 8, 32].filter(() => rand() < 0.45)
  return pool.length > 0 ? pool : [int(rand, 2, 8)]
}

/** A random permutation of the shards; one case in five ranks only a random subset. */
export function randomImportance(rand: () => number, layers: number, shards: number): ShardRef[] {
  const all: ShardRef[] = []
  for (let layer = 0; layer < layers; layer++) for (let shard = 0; shard < shards; shard++) all.push({ layer, shard })
  for (let i = all.length - 1; i > 0; i--) {
    const j = int(rand, 0, i)
    ;[all[i], all[j]] = [all[j]!, all[i]!]
  }
  return rand() < 0.2 ? all.slice(0, int(rand, 0, all.length)) : all
}

/**
 * A random profile: 1..12 layers of 1..12 shards of 2k..120k weights with 0.05-0.35 % outliers,
 * 20 MB/s .. 2 GB/s reads with 0..3 ms per job, per-layer compute base + per-shard cost (slightly
 * noisy, so occasionally not monotone in the width), fixed part 0..20 ms.
 */
export function randomProfile(seed: number): RandomCase {
  const rand = prng(seed)
  const layers = int(rand, 1, 12)
  const shardsPerLayer = int(rand, 1, 12)
  const bitwidths = randomBitwidths(rand)
  const count = int(rand, 2000, 120_000)
  const uniformSizes = rand() < 0.3
  const outliers = (): number => Math.floor(count * (0.0005 + rand() * 0.003))
  const fixedOutliers = outliers()
  const table = Array.from({ length: layers }, () =>
    Array.from({ length: shardsPerLayer }, () => {
      const o = outliers()
      return bitwidths.map((b) => shardBlobBytes(count, b, o))
    }),
  )
  const shardBytes = uniformSizes ? (bits: number) => shardBlobBytes(count, bits, fixedOutliers) : table
  const mbPerS = Math.exp(Math.log(20) + rand() * Math.log(100))
  const base = rand() * 15
  const perShard = 0.2 + rand() * 8
  const layerComputeMs = [0, ...Array.from({ length: shardsPerLayer }, (_, i) => base + perShard * (i + 1) * (0.9 + 0.2 * rand()))]
  const profile: ElasticProfile = {
    layers,
    shardsPerLayer,
    bitwidths,
    shardBytes,
    readMsPerByte: 1 / (mbPerS * 1000),
    readMsPerJob: rand() < 0.3 ? 0 : rand() * 3,
    layerComputeMs,
    fixedMs: rand() * 20,
  }
  const fullComputeMs = profile.fixedMs + layers * layerComputeMs[shardsPerLayer]!
  return { seed, profile, importance: randomImportance(rand, layers, shardsPerLayer), uniformSizes, fullComputeMs }
}

/** Bytes of a shard version, read the way the planner does (function or table). */
export function sizeOf(p: ElasticProfile, layer: number, shard: number, bits: number): number {
  const t = p.shardBytes
  return typeof t === 'function' ? t(bits, layer, shard) : t[layer]![shard]![p.bitwidths.indexOf(bits)]!
}

/**
 * A reference plan shape built independently of the planner: depth x width, the leading shards (layer
 * order) that fit in preloadBytes at preloadBits preloaded, the others at `bits` (or bitsOf(layer, shard)).
 */
export function shapeOf(
  p: ElasticProfile,
  o: { targetMs: number; depth: number; width: number; preloadBytes: number; preloadBits: number },
  bits: number | ((layer: number, shard: number) => number),
): PlanShape {
  let used = 0
  let prefix = true
  const shards = Array.from({ length: o.depth }, (_, layer) =>
    Array.from({ length: o.width }, (_, shard) => {
      used += sizeOf(p, layer, shard, o.preloadBits)
      prefix &&= used <= o.preloadBytes
      const loaded = typeof bits === 'number' ? bits : bits(layer, shard)
      return { shard, bits: prefix ? o.preloadBits : loaded, preloaded: prefix }
    }),
  )
  return { targetMs: o.targetMs, shards }
}

/** The plan with one shard's bitwidth replaced. */
export function withBits(plan: PlanShape, layer: number, index: number, bits: number): PlanShape {
  return { ...plan, shards: plan.shards.map((row, k) => row.map((s, j) => (k === layer && j === index ? { ...s, bits } : s))) }
}

/** The plan with every loaded shard at `bits`. */
export function withUniformLoaded(plan: ElasticPlan, bits: number): PlanShape {
  return { ...plan, shards: plan.shards.map((row) => row.map((s) => (s.preloaded ? s : { ...s, bits }))) }
}
