// SPDX-License-Identifier: Apache-2.0
// The memory benchmark's outputs: the table, the acceptance checks (printed, not asserted) and one
// latency-memory SVG per model.
import { label, type ChildFailure, type ChildResult, type PairedResult, type Series } from './configs.js'
import { MB } from './memory-cases.js'
import { lineChart, type Marker, type PlotSeries } from './svg-plot.js'

/** Cold read bandwidth measured around a model's runs (bytes/s). */
export interface ReadBandwidth {
  readonly before: number
  readonly after: number
  readonly direct: boolean
}

export interface Pending {
  readonly model: string
  readonly what: string
  readonly reason: string
}

const mb = (bytes: number | undefined) => (bytes === undefined || !Number.isFinite(bytes) ? '-' : (bytes / MB).toFixed(1))
export const throttleLabel = (t: number | undefined) => (t === undefined ? 'off' : `${(t / MB).toFixed(0)}MB/s`)
const arenaOf = (r: ChildResult) => (typeof r.stats.arenaBytes === 'number' ? r.stats.arenaBytes : undefined)

/** The unconstrained flexpipe run of the same model and throttle (the curve package opened unlimited; else open(onnx)). */
export function reference(results: readonly ChildResult[], r: ChildResult): ChildResult | undefined {
  const same = results.filter((x) => x.model === r.model)
  const curve = same.find((x) => x.config.series === 'flexpipe' && x.config.budget === 'unlimited' && x.throttle === r.throttle)
  return curve ?? same.find((x) => x.config.pkg === 'onnx')
}

export function table(results: readonly ChildResult[], failures: readonly ChildFailure[], pending: readonly Pending[]): string[] {
  const head = ['model', 'throttle', 'config', 'budget MB', 'peak MB', 'arena MB', 'median ms (p10-p90)', 'ratio']
  const rows = results.map((r) => {
    const ref = reference(results, r)
    return [
      r.model,
      r.config.pkg === 'onnx' ? '-' : throttleLabel(r.throttle),
      label(r.config),
      r.memoryBudget === undefined ? 'unlimited' : mb(r.memoryBudget),
      mb(r.peakBytes),
      mb(arenaOf(r)),
      `${r.median.toFixed(1)} (${r.p10.toFixed(1)}-${r.p90.toFixed(1)})`,
      ref === undefined ? '-' : `${(r.median / ref.median).toFixed(2)}x`,
    ]
  })
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const right = [false, false, false, true, true, true, true, true]
  const fmt = (r: string[]) => `| ${r.map((x, i) => (right[i] ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join(' | ')} |`
  const lines = [fmt(head), `|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...rows.map(fmt)]
  for (const f of failures) lines.push(`error: ${f.model} ${label(f.config)} throttle ${throttleLabel(f.throttle)}: ${f.error}`)
  for (const p of pending) lines.push(`not run: ${p.model} ${p.what}: ${p.reason}`)
  return lines
}

/**
 * The least time a plan's weight reads take at the cold read bandwidth measured in the same run (before
 * and after the model's runs; the faster of the two, so the floor is not overstated; capped by the
 * throttle). No overlap of loading and computing finishes an inference faster than its reads.
 */
export function ioFloor(r: ChildResult, bw: ReadBandwidth | undefined): { bytes: number; bw: number; ms: number } | undefined {
  const bytes = r.stats.loadBytesPerInference
  if (bw === undefined || typeof bytes !== 'number') return undefined
  const rate = Math.min(Math.max(bw.before, bw.after), r.throttle ?? Infinity)
  return { bytes, bw: rate, ms: (bytes / rate) * 1e3 }
}

/**
 * The planner's simulated time of the run's plan and the medians of its timed runs' lane waits
 * (ops waiting for loads, loads for ops) and read time, when the plan streams weights.
 */
export function pipelineSummary(r: ChildResult): string | undefined {
  const runs = (r.pipeline ?? []) as Array<{ computeWaitMs: number; loadWaitMs: number; readMs: number }>
  if (runs.length === 0) return undefined
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
  const modelled = typeof r.stats.modelledMs === 'number' ? `planner's model ${r.stats.modelledMs.toFixed(1)} ms against ${r.median.toFixed(1)} measured; ` : ''
  return `${modelled}medians per run: ops waited ${med(runs.map((x) => x.computeWaitMs)).toFixed(1)} ms for loads, loads ${med(runs.map((x) => x.loadWaitMs)).toFixed(1)} ms for ops, reads took ${med(runs.map((x) => x.readMs)).toFixed(1)} ms`
}

function curvePoint(results: readonly ChildResult[], model: string, budget: number): ChildResult[] {
  return results.filter((r) => r.model === model && r.config.series === 'flexpipe' && r.memoryBudget === budget)
}

/** The acceptance checks of the issue, printed as PASS / MISS / not measured. */
export function checks(results: readonly ChildResult[], models: readonly string[], bandwidth: Readonly<Record<string, ReadBandwidth>> = {}, paired: readonly PairedResult[] = []): string[] {
  const lines = ['Checks (MB = 1e6 bytes; "100 MB" = 100e6 bytes):']
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS')
  const at100 = (model: string, withLatency: boolean) => {
    if (!models.includes(model)) return
    const rs = curvePoint(results, model, 100 * MB)
    if (rs.length === 0) lines.push(`  ${model} @ 100 MB: not measured`)
    for (const r of rs) {
      const ref = reference(results, r)
      const ratio = ref === undefined ? NaN : r.median / ref.median
      let s = `  ${model} @ 100 MB, throttle ${throttleLabel(r.throttle)}: peak ${mb(r.peakBytes)} MB <= 105: ${verdict(r.peakBytes <= 105 * MB)}`
      if (withLatency) s += `; median ${r.median.toFixed(1)} ms = ${ratio.toFixed(2)}x unconstrained <= 1.10: ${verdict(ratio <= 1.1)}`
      lines.push(s)
      const floor = ioFloor(r, bandwidth[model])
      if (withLatency && floor !== undefined && ref !== undefined) {
        const need = (1.1 * ref.median) / 1e3
        lines.push(
          `    IO floor: ${mb(floor.bytes)} MB read per inference at ${(floor.bw / 1e9).toFixed(2)} GB/s = ${floor.ms.toFixed(1)} ms = ${(floor.ms / ref.median).toFixed(2)}x unconstrained; ` +
            `1.10x needs <= ${mb(floor.bw * need)} MB per inference at this bandwidth, or >= ${(floor.bytes / need / 1e9).toFixed(2)} GB/s for these reads`,
        )
      }
      const lanes = pipelineSummary(r)
      if (withLatency && lanes !== undefined) lines.push(`    ${lanes}`)
      const p = paired.find((q) => q.model === model && q.throttle === r.throttle)
      if (withLatency && p !== undefined) {
        const range = `${Math.min(...p.rounds.map((x) => x.ratio)).toFixed(2)}-${Math.max(...p.rounds.map((x) => x.ratio)).toFixed(2)}`
        lines.push(
          `    in one process (${p.rounds.length} alternating rounds): ${p.budgetedMedianMs.toFixed(1)} ms against ${p.unconstrainedMedianMs.toFixed(1)} unconstrained, ` +
            `median per-round ratio ${p.ratio.toFixed(2)}x (${range}) <= 1.10: ${verdict(p.ratio <= 1.1)}`,
        )
      }
    }
  }
  at100('resnet152', true)
  at100('vgg19', false)
  for (const model of models) {
    const curve = results.filter((r) => r.model === model && r.config.series === 'flexpipe' && r.memoryBudget !== undefined)
    const minimum = curve.map((r) => r.minimumBudget ?? r.memoryBudget!).sort((a, b) => a - b)[0]
    const od = results.filter((r) => r.model === model && r.config.series === 'On-Demand')
    if (minimum === undefined || od.length === 0) {
      lines.push(`  ${model}: smallest feasible budget vs On-Demand peak: not measured`)
      continue
    }
    for (const o of od) {
      lines.push(`  ${model}, throttle ${throttleLabel(o.throttle)}: smallest feasible budget ${mb(minimum)} MB vs On-Demand peak ${mb(o.peakBytes)} MB: ${verdict(minimum <= o.peakBytes)}`)
    }
  }
  return lines
}

const style: Record<Series, { color: string; marker: Marker }> = {
  flexpipe: { color: '#1f77b4', marker: 'circle' },
  'flexpipe (onnx)': { color: '#7f7f7f', marker: 'circle' },
  'NCNN-Default': { color: '#d62728', marker: 'square' },
  'NCNN-Direct': { color: '#ff7f0e', marker: 'triangle' },
  'On-Demand': { color: '#2ca02c', marker: 'diamond' },
  'w/o static plan': { color: '#9467bd', marker: 'cross' },
  'w/o preload': { color: '#8c564b', marker: 'cross' },
  'w/o both': { color: '#e377c2', marker: 'cross' },
}

/** Latency against measured peak memory: the flexpipe curve per throttle setting, one marker per baseline run. */
export function plot(model: string, describe: string, results: readonly ChildResult[]): string {
  const mine = results.filter((r) => r.model === model)
  const series: PlotSeries[] = []
  const groups = new Map<string, ChildResult[]>()
  for (const r of mine) {
    const key = `${r.config.series}\u0000${r.config.pkg === 'onnx' ? '' : throttleLabel(r.throttle)}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  for (const [key, rs] of groups) {
    const [name, throttle] = key.split('\u0000') as [Series, string]
    const throttled = throttle !== '' && throttle !== 'off'
    series.push({
      label: `${name}${name === 'flexpipe (onnx)' ? '' : throttled ? ` @${throttle}` : ''}`,
      points: rs.map((r) => [r.peakBytes / MB, r.median] as const),
      ...style[name],
      line: name === 'flexpipe',
      dashed: throttled,
      hollow: throttled,
    })
  }
  return lineChart({ title: `${describe}: latency vs memory`, xLabel: 'peak memory, MB (measured: VmHWM - baseline RSS)', yLabel: 'median latency, ms', series })
}
