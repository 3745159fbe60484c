// SPDX-License-Identifier: Apache-2.0
// Inputs and outputs of the STI elastic pipeline planners (planElastic and the baselines).
//
// Units: times in milliseconds, sizes in bytes. A sub-model depth x width is the bottom `depth`
// layers with shards 0..width-1 in each (the fixture's "first m heads"); shard s of layer l at a
// bitwidth is one blob on disk. Layer k's non-preloaded shards are read as one IO job.

/**
 * Bytes of one shard version on disk. Either a function (called with the bitwidth, then the layer
 * and shard, for profiles where all shards of a bitwidth are the same size) or the exact table
 * `shardBytes[layer][shard][bitsIndex]` (outlier counts differ per shard), `bitsIndex` indexing
 * `ElasticProfile.bitwidths`. Sizes are integers >= 0.
 */
export type ShardBytes =
  | ((bits: number, layer: number, shard: number) => number)
  | readonly (readonly (readonly number[])[])[]

/** What the device profiler measured, plus the model's shape. */
export interface ElasticProfile {
  /** N: layers of the full model. */
  readonly layers: number
  /** M: shards (vertical slices) per layer. */
  readonly shardsPerLayer: number
  /** Stored bitwidths, ascending, e.g. [2, 3, 4, 5, 6, 32] (32 = the unquantized fp32 shard). */
  readonly bitwidths: readonly number[]
  readonly shardBytes: ShardBytes
  /** IO model of one layer's job: readMsPerJob + bytes * readMsPerByte (0 when nothing is read). */
  readonly readMsPerByte: number
  readonly readMsPerJob: number
  /**
   * Length M + 1: layerComputeMs[m] is the compute delay of one layer of m shards, dequantization
   * included, at the planned sequence length. Index 0 is unused.
   */
  readonly layerComputeMs: readonly number[]
  /** Embedding + pooler + classifier compute, modelled as running before layer 0 (its IO overlaps it). */
  readonly fixedMs: number
}

/** One shard of the full model. */
export interface ShardRef {
  readonly layer: number
  readonly shard: number
}

/**
 * What the dev set measured in the importance profile (seed §5.2): the accuracy with every shard at
 * the lowest bitwidth, at the highest, and per shard the change when that shard alone is raised to the
 * highest. With it, IO planning spends budget on bits only where they measured more accurate.
 */
export interface MeasuredAccuracy {
  /** Dev accuracy, every shard at the lowest bitwidth. */
  readonly lowest: number
  /** Dev accuracy, every shard at the highest bitwidth. */
  readonly highest: number
  /** gain[layer][shard]: accuracy with that shard alone at the highest bitwidth, minus `lowest`. */
  readonly gain: readonly (readonly number[])[]
  /**
   * Optional: subModels[depth - 1][width - 1][bi] is the dev accuracy of that sub-model with every
   * shard at bitwidths[bi]. With it, planElastic picks the most accurate sub-model and bitwidth whose
   * plan meets T (accuracy-plan.ts) instead of the largest sub-model.
   */
  readonly subModels?: readonly (readonly (readonly number[])[])[]
}

/** A ranking, most important shard first, with the accuracies it was ranked by (optional). */
export interface RankedImportance {
  readonly ranking: readonly ShardRef[]
  readonly accuracy?: MeasuredAccuracy
}

export interface ElasticOptions {
  /** T: the pipeline must finish within this many ms of the inference start. */
  readonly targetMs: number
  /** P: bytes of the preload buffer (default 0; Infinity = unlimited). */
  readonly preloadBytes?: number
  /** Bitwidth preloaded shards are held in (default: the highest bitwidth below 32, else the highest). */
  readonly preloadBits?: number
}

export interface BaselineOptions {
  readonly targetMs: number
  /** The one bitwidth every shard uses (StdPL-X, PreloadModel-X). */
  readonly bits: number
}

/** Which algorithm produced a plan (the benchmark's labels). */
export type ElasticPlanner = 'flexpipe' | 'load-and-exec' | 'stdpl' | 'preload-model'

/**
 * How the executor runs a plan. 'pipelined': IO jobs run back to back in layer order from time 0,
 * the fixed part computes from time 0, and layer k computes once layer k-1 has and IO job k is
 * done. 'load-then-execute': every IO job first, then the fixed part, then the layers.
 */
export type ElasticSchedule = 'pipelined' | 'load-then-execute'

export interface PlannedShard {
  /** Shard index within its layer (< width). */
  readonly shard: number
  readonly bits: number
  /** Held in the preload buffer (no IO at inference). */
  readonly preloaded: boolean
  readonly bytes: number
}

export interface PreloadEntry {
  readonly layer: number
  readonly shard: number
  readonly bits: number
  readonly bytes: number
}

export interface ElasticPlan {
  /** The planner, or 'full-model': every layer and shard at fp32, for an engine opened without a target. */
  readonly planner: ElasticPlanner | 'full-model'
  readonly schedule: ElasticSchedule
  readonly targetMs: number
  /** n: layers executed (the bottom n). */
  readonly depth: number
  /** m: shards per executed layer (shards 0..m-1). */
  readonly width: number
  /** shards[k] for k < depth: the width shards of layer k, in shard order. */
  readonly shards: readonly (readonly PlannedShard[])[]
  /** What the preload buffer holds, in layer order (for preload-model: the whole N x M model). */
  readonly preload: readonly PreloadEntry[]
  /** Total bytes of `preload`. */
  readonly preloadBytes: number
  /**
   * The bitwidth every loaded shard had before per-shard upgrades: flexpipe's pass-1 result (the
   * highest bitwidth when nothing is loaded), the one bitwidth of the baselines.
   */
  readonly uniformBits: number
  /** Final accumulated IO budgets, one per executed layer; all >= 0 for every planner. */
  readonly aib: readonly number[]
  /** Makespan of simulatePipeline under the profile; <= targetMs. */
  readonly modelledMs: number
  /** Bytes read at inference (the non-preloaded shards of the sub-model). */
  readonly loadBytes: number
  /** Shards of the sub-model (preloaded included) per bitwidth, every profile bitwidth present. */
  readonly bitsHistogram: Readonly<Record<number, number>>
}

/** The part of a plan the AIB check and the simulation read (so hand-made candidates can be checked). */
export interface PlanShape {
  readonly targetMs: number
  readonly shards: readonly (readonly Pick<PlannedShard, 'shard' | 'bits' | 'preloaded'>[])[]
  /** Default 'pipelined'. */
  readonly schedule?: ElasticSchedule
}

export interface AibCheck {
  /** Every AIB >= 0. */
  readonly valid: boolean
  readonly aib: readonly number[]
  /** T - fixedMs - depth * layerComputeMs[width]: the idle time the pipeline can afford. */
  readonly slackMs: number
}

/** Per-layer times of one simulated inference (time 0 = inference start). */
export interface PipelineTimeline {
  readonly totalMs: number
  readonly ioEndMs: readonly number[]
  readonly computeStartMs: readonly number[]
  /** Time layer k waited for its IO beyond the end of the previous compute (0 when the IO was ready). */
  readonly stallMs: readonly number[]
}
