// SPDX-License-Identifier: Apache-2.0
// What the elastic benchmark measures: the IO modes, the configurations of the STI evaluation (seed
// §7.1: flexpipe at three preload buffers and the Load&Exec, StdPL-X and PreloadModel-X baselines),
// and the child's JSON request and answers.
import type { ElasticPlanner } from '../../lib/plan/elastic/index.js'

/** 1 MB = 2^20 bytes in this benchmark (preload buffers, tables, plots). */
export const MiB = 2 ** 20

/** The paper's Raspberry Pi 4B read speed, as in the memory benchmark. */
export const THROTTLE = 257e6

export type IoMode = 'cold' | 'throttled'

export interface IoSetting {
  readonly direct: true
  /** Emulated storage bandwidth, bytes/s; undefined = no throttle. */
  readonly bandwidth?: number
  readonly describe: string
}

export const ioSettings: Readonly<Record<IoMode, IoSetting>> = {
  cold: { direct: true, describe: 'cold: O_DIRECT reads (no page cache), no throttle' },
  throttled: { direct: true, bandwidth: THROTTLE, describe: `throttled: O_DIRECT reads throttled to ${THROTTLE} B/s` },
}

export interface Configuration {
  readonly label: string
  readonly planner: ElasticPlanner
  readonly plannerBits?: number
  readonly preloadBytes?: number
}

export const flexpipeLabels = ['flexpipe-0MB', 'flexpipe-1MB', 'flexpipe-5MB'] as const
/** The baselines flexpipe must be at least as accurate as at every T. */
export const pipelineBaselines = ['Load&Exec', 'StdPL-full', 'StdPL-2bit', 'StdPL-6bit'] as const

export const configurations: readonly Configuration[] = [
  { label: 'flexpipe-0MB', planner: 'flexpipe', preloadBytes: 0 },
  { label: 'flexpipe-1MB', planner: 'flexpipe', preloadBytes: MiB },
  { label: 'flexpipe-5MB', planner: 'flexpipe', preloadBytes: 5 * MiB },
  { label: 'Load&Exec', planner: 'load-and-exec' },
  { label: 'StdPL-full', planner: 'stdpl', plannerBits: 32 },
  { label: 'StdPL-2bit', planner: 'stdpl', plannerBits: 2 },
  { label: 'StdPL-6bit', planner: 'stdpl', plannerBits: 6 },
  { label: 'PreloadModel-full', planner: 'preload-model', plannerBits: 32 },
  { label: 'PreloadModel-6bit', planner: 'preload-model', plannerBits: 6 },
]

/** One measurement, fully resolved by the parent. */
export interface ChildRequest {
  readonly pkg: string
  readonly dev: string
  readonly config: Configuration
  readonly io: IoMode
  readonly targetMs: number
  readonly threads: number
  readonly seq: number
  readonly warmup: number
  readonly runs: number
}

/** The executed plan, as the benchmark reports it. */
export interface PlanSummary {
  readonly depth: number
  readonly width: number
  /** bits[k][j]: shard j of layer k. */
  readonly bits: number[][]
  readonly preloaded: boolean[][]
  readonly bitsHistogram: Record<number, number>
  readonly uniformBits: number
  readonly schedule: string
  /** Bytes the plan's preload buffer holds (for PreloadModel: the whole model at its bitwidth). */
  readonly preloadBytes: number
  /** Bytes read per inference. */
  readonly loadBytes: number
  readonly modelledMs: number
}

export interface Measured {
  readonly ok: true
  readonly feasible: true
  /** The plan the engine opened with: the planner's decision from the device profile for T. */
  readonly openedPlan: PlanSummary
  /** Times online calibration replaced the plan during the warm-up and timed calls. */
  readonly replans: number
  /** The plan in force after the timed calls (online calibration may have shrunk or grown it). */
  readonly plan: PlanSummary
  /** Non-shard parameters (embeddings, LayerNorms, biases, pooler, classifier), float32. */
  readonly residentParameterBytes: number
  /** What the executor's arena holds for the preload buffer (the sub-model's preloaded shards). */
  readonly preloadRegionBytes: number
  readonly stagingBytes: number
  readonly arenaBytes: number
  readonly baselineRSS: number
  readonly vmHWM: number
  /** VmHWM - baseline RSS (node + library + addon + dev ids loaded). */
  readonly peakBytes: number
  readonly openPeakBytes: number
  readonly openMs: number
  readonly warmupMs: number[]
  /** Wall time of each timed inferIds() call. */
  readonly timesMs: number[]
  /** The engine's own totalMs of each timed call. */
  readonly engineMs: number[]
  readonly bytesReadPerRun: number
  readonly median: number
  readonly p95: number
  /** Fraction of timed inferences within 1.05 x T. */
  readonly within: number
  readonly reader: string
}

/** The planner found no sub-model within T (a result, not an error). */
export interface Infeasible {
  readonly ok: true
  readonly feasible: false
  readonly minimumMs: number
  readonly message: string
}

export interface Failure {
  readonly ok: false
  readonly error: string
}

export type ChildAnswer = Measured | Infeasible | Failure

/** A configuration's figures in the results (the parent adds the accuracy and the memory it counts). */
export interface Row {
  readonly io: IoMode
  readonly target: string
  readonly targetMs: number
  readonly config: string
  readonly result: Measured | Infeasible | Failure
  /**
   * Dev accuracy of the opened plan with every shard resident (undefined when there is no plan): what
   * the planners are compared on, since every configuration plans from the same device profile, while
   * online calibration adapts each engine to its own measurements.
   */
  readonly accuracy?: number
  /** Dev accuracy of the plan in force after the timed calls. */
  readonly finalAccuracy?: number
  /** Resident parameter bytes + plan.preloadBytes: what stays in memory between calls. */
  readonly residentBytes?: number
}
