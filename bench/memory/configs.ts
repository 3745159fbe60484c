// SPDX-License-Identifier: Apache-2.0
// What one measurement is (the child's JSON argument and answer) and which measurements a model gets:
// the flexpipe curve, the three baselines and the ablations of the FlexNN evaluation.

/** prepare() options of the lead's API (lib/prepare). */
export interface PrepareOptions {
  readonly budget?: number
  readonly dims?: Record<string, number>
  readonly kernels?: 'auto' | 'direct'
  readonly slicing?: boolean
  /** The engine's thread count: workspaces and the recorded device profile depend on it. */
  readonly threads?: number
}

export interface PrepareReport {
  readonly minimumBudget: number
  readonly layers: number
  readonly slicedLayers: number
  readonly packageBytes: number
  readonly ms: number
}

/** open() options of the lead's API beyond today's { threads }. */
export interface BudgetOpenOptions {
  readonly memoryBudget?: number
  readonly threads?: number
  readonly direct?: boolean
  readonly ioBandwidth?: number
  readonly preload?: boolean
  readonly staticPlan?: boolean
  readonly pin?: boolean
}

/** Which package a configuration opens; 'onnx' is the model file itself (today's open(): all weights in memory). */
export type PackageKind = 'onnx' | 'curve' | 'default' | 'direct' | 'ondemand'

export type Series = 'flexpipe' | 'flexpipe (onnx)' | 'NCNN-Default' | 'NCNN-Direct' | 'On-Demand' | 'w/o static plan' | 'w/o preload' | 'w/o both'

export interface Configuration {
  readonly series: Series
  readonly pkg: PackageKind
  /** Bytes, 'min' (engine.minimumBudget, read in the child) or 'unlimited'. */
  readonly budget: number | 'min' | 'unlimited'
  readonly preload?: boolean
  readonly staticPlan?: boolean
  readonly pin?: boolean
}

/** The child's argument: one configuration, fully resolved. */
export interface ChildRequest {
  readonly model: string
  readonly file: string
  readonly config: Configuration
  /** The budget to open with, resolved by the parent ('min' = the package's minimumBudget); undefined = unlimited. */
  readonly budgetBytes: number | undefined
  readonly threads: number
  /** ioBandwidth (bytes/s) or undefined for no throttle. */
  readonly throttle: number | undefined
  readonly warmup: number
  readonly runs: number
}

/**
 * The latency ratio of a budget against the unconstrained engine, measured in one process: engines
 * opened in turn (one at a time, so no two OpenMP teams spin against each other), `runs` timed runs
 * each, `rounds` rounds in alternating order. Separate children can land in different states of a
 * shared VM (whole processes 1.5x slower), so a ratio of two children's medians moves with that state;
 * the per-round ratios of one process do not.
 */
export interface PairedRequest {
  readonly paired: { readonly model: string; readonly file: string; readonly budgetBytes: number; readonly threads: number; readonly throttle: number | undefined; readonly runs: number; readonly rounds: number }
}

export interface PairedResult {
  readonly ok: true
  readonly model: string
  readonly budgetBytes: number
  readonly throttle: number | undefined
  readonly threads: number
  /** Per round: the median of the budgeted engine's runs, of the unconstrained engine's, and their ratio. */
  readonly rounds: Array<{ budgetedMs: number; unconstrainedMs: number; ratio: number }>
  readonly budgetedMedianMs: number
  readonly unconstrainedMedianMs: number
  /** Median over rounds of the per-round ratio. */
  readonly ratio: number
}

export interface ChildResult {
  readonly ok: true
  readonly model: string
  readonly config: Configuration
  readonly throttle: number | undefined
  /** The budget the engine was opened with (bytes; undefined = unlimited). */
  readonly memoryBudget: number | undefined
  readonly minimumBudget: number | undefined
  readonly baselineRSS: number
  readonly baselineHWM: number
  readonly vmHWM: number
  readonly peakBytes: number
  /** VmHWM - baseline right after open(), before the first infer(). */
  readonly openPeakBytes: number
  readonly openMs: number
  readonly warmupMs: number[]
  readonly timesMs: number[]
  readonly median: number
  readonly p10: number
  readonly p90: number
  readonly stats: Record<string, unknown>
  /** Per timed run of a streaming plan: its lanes' waits and its reads' time (BudgetStats.lastPipeline). */
  readonly pipeline?: unknown[]
  readonly api: 'package' | 'onnx'
}

export interface ChildFailure {
  readonly ok: false
  readonly model: string
  readonly config: Configuration
  readonly throttle: number | undefined
  readonly error: string
}

/** The child's second mode: write one package (so the parent never holds a model in memory). */
export interface PrepareRequest {
  readonly prepare: { readonly model: string; readonly file: string; readonly out: string; readonly options: PrepareOptions }
}

export const label = (c: Configuration): string => (c.series === 'flexpipe' ? `flexpipe@${budgetLabel(c.budget)}` : c.series)

export function budgetLabel(b: Configuration['budget'] | undefined): string {
  if (b === undefined || b === 'unlimited') return 'unlimited'
  if (b === 'min') return 'min'
  return `${(b / 1e6).toFixed(b < 10e6 ? 1 : 0)}MB`
}

/**
 * `count` budgets from `low` to `high` spaced geometrically (both ends included), with the budgets a
 * check needs when they fall inside: each replaces the nearest inner point when within 15% of it
 * (so the curve keeps `count` points), else is added. Ascending, in whole bytes.
 */
export function curveBudgets(low: number, high: number, count: number, extra: readonly number[]): number[] {
  const out: number[] = []
  if (count <= 1 || high <= low) out.push(low)
  else for (let i = 0; i < count; i++) out.push(low * (high / low) ** (i / (count - 1)))
  for (const b of extra) {
    if (b < low || b > high || out.includes(b)) continue
    const inner = out.map((p, i) => ({ i, d: Math.abs(Math.log(p / b)) })).filter(({ i }) => i > 0 && i < out.length - 1)
    const near = inner.sort((x, y) => x.d - y.d)[0]
    if (near !== undefined && near.d < Math.log(1.15)) out[near.i] = b
    else out.push(b)
  }
  return [...new Set(out.map(Math.round))].sort((a, b) => a - b)
}

/** The baselines (fixed memory, one point each) and the ablations at one mid-curve budget. */
export function pointConfigurations(midBudget: number): Configuration[] {
  return [
    { series: 'NCNN-Default', pkg: 'default', budget: 'unlimited' },
    { series: 'NCNN-Direct', pkg: 'direct', budget: 'unlimited' },
    { series: 'On-Demand', pkg: 'ondemand', budget: 'min', preload: false, pin: false },
    { series: 'w/o static plan', pkg: 'curve', budget: midBudget, staticPlan: false },
    { series: 'w/o preload', pkg: 'curve', budget: midBudget, preload: false },
    { series: 'w/o both', pkg: 'curve', budget: midBudget, staticPlan: false, preload: false },
  ]
}

/** prepare() options per package kind; the curve package is prepared for the lowest budget tested. */
export function prepareOptions(kind: Exclude<PackageKind, 'onnx'>, floor: number, threads: number): PrepareOptions {
  // The bench models have a symbolic batch (GPT-2's input is fixed): batch 1, as the inputs are made.
  const common = { dims: { batch: 1 }, threads }
  switch (kind) {
    case 'curve':
      return { ...common, budget: floor }
    case 'default':
      return common
    case 'direct':
      return { ...common, kernels: 'direct' }
    case 'ondemand':
      return { ...common, slicing: false }
  }
}
