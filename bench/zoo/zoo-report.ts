// SPDX-License-Identifier: Apache-2.0
// bench:zoo's figures from its children's results (pure): per case and thread count the median over
// processes of each process's median, the ratio flexpipe / onnxruntime, geometric means, the table.
import { median, round } from '../models/cases.js'

/** max |ours - ort| <= 1e-4 * max |ort| + 1e-5 for every output (the conformance tests' tolerance). */
export const conformanceTolerance = { relative: 1e-4, absolute: 1e-5 }

export interface Conformance {
  readonly ok: boolean
  readonly outputs: Array<{ name: string; dims: number[]; maxAbsDiff: number; maxAbsOrt: number }>
  readonly error?: string
}

export function compareOutputs(ours: ReadonlyArray<{ name: string; data: Float32Array }>, theirs: ReadonlyArray<{ name: string; dims: number[]; data: Float32Array }>): Conformance {
  const outputs = theirs.map((want) => {
    const got = ours.find((o) => o.name === want.name)
    let maxAbsOrt = 0
    for (const x of want.data) maxAbsOrt = Math.max(maxAbsOrt, Math.abs(x))
    if (got === undefined || got.data.length !== want.data.length) return { name: want.name, dims: want.dims, maxAbsDiff: NaN, maxAbsOrt }
    let maxAbsDiff = 0
    for (let i = 0; i < want.data.length; i++) {
      maxAbsDiff = Math.max(maxAbsDiff, Math.abs(got.data[i]! - want.data[i]!)) // NaN stays NaN
      if (Number.isNaN(maxAbsDiff)) break
    }
    return { name: want.name, dims: want.dims, maxAbsDiff, maxAbsOrt }
  })
  const ok = outputs.length > 0 && outputs.every((o) => o.maxAbsDiff <= conformanceTolerance.relative * o.maxAbsOrt + conformanceTolerance.absolute)
  return { ok, outputs }
}

/** One engine's timed processes for one case and thread count. */
export interface EngineRuns {
  /** Each process's median (ms); failed processes are absent. */
  readonly processMedians: number[]
  readonly errors: string[]
}

export interface LatencyRow {
  readonly key: string
  readonly threads: number
  readonly flexpipeMs: number
  readonly ortMs: number
  /** flexpipeMs / ortMs (medians over processes). */
  readonly ratio: number
  /** Per-process pairs (process i of each engine ran back to back): their ratios' range. */
  readonly pairRatios: number[]
  /**
   * The median of pairRatios: each pair ran back to back, so a drift of the machine's speed between
   * pairs (this VM's 2-thread figures move by up to 1.7x between minutes) cancels within a pair.
   */
  readonly pairRatio: number
}

export function latencyRow(key: string, threads: number, fp: EngineRuns, ort: EngineRuns): LatencyRow | undefined {
  if (fp.processMedians.length === 0 || ort.processMedians.length === 0) return undefined
  const flexpipeMs = median(fp.processMedians)
  const ortMs = median(ort.processMedians)
  const n = Math.min(fp.processMedians.length, ort.processMedians.length)
  const pairRatios = Array.from({ length: n }, (_, i) => round(fp.processMedians[i]! / ort.processMedians[i]!))
  return { key, threads, flexpipeMs: round(flexpipeMs), ortMs: round(ortMs), ratio: round(flexpipeMs / ortMs), pairRatios, pairRatio: round(median(pairRatios)) }
}

export function geometricMean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN
  return Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length)
}

export interface ColdRow {
  readonly key: string
  /** Fresh process to first result (ms), median over processes. */
  readonly flexpipeMs: number
  readonly ortMs: number
  readonly ratio: number
  /** Spawn to the engine open (module imported inside), and the first run, per engine (medians). */
  readonly flexpipeOpenMs: number
  readonly flexpipeFirstRunMs: number
  readonly ortOpenMs: number
  readonly ortFirstRunMs: number
}

const fmt = (x: number | undefined, digits = 1): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits))

/** The zoo table: one row per case; latency per thread count; cold start when measured. */
export function zooTable(keys: readonly string[], threads: readonly number[], latency: readonly LatencyRow[], cold: readonly ColdRow[], conformance: ReadonlyMap<string, Conformance>, limit: number): string[] {
  const head = ['model @ shape', 'conforms', ...threads.flatMap((t) => [`${t}t flexpipe ms`, `${t}t ort ms`, `${t}t ratio`]), 'cold flexpipe ms', 'cold ort ms', 'cold ratio']
  const rows = keys.map((key) => {
    const c = conformance.get(key)
    const conf = c === undefined ? '-' : c.error !== undefined ? 'error' : c.ok ? 'yes' : 'NO'
    const lat = threads.flatMap((t) => {
      const r = latency.find((l) => l.key === key && l.threads === t)
      return r === undefined ? ['-', '-', '-'] : [fmt(r.flexpipeMs, 2), fmt(r.ortMs, 2), `${r.ratio.toFixed(2)}x${r.ratio > limit ? ' !' : ''}`]
    })
    const k = cold.find((r) => r.key === key)
    return [key, conf, ...lat, fmt(k?.flexpipeMs, 0), fmt(k?.ortMs, 0), k === undefined ? '-' : `${k.ratio.toFixed(2)}x`]
  })
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (r: string[]) => `| ${r.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join(' | ')} |`
  const out = [line(head), `|${widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)]
  const summary = threads.map((t) => {
    const rs = latency.filter((l) => l.threads === t)
    const over = rs.filter((r) => r.ratio > limit)
    const pairOver = rs.filter((r) => r.pairRatio > limit)
    return `${t} thread${t > 1 ? 's' : ''}: geometric mean ${geometricMean(rs.map((r) => r.ratio)).toFixed(3)}x over ${rs.length} cases, ${over.length} above ${limit}x; ` +
      `of the pairs' median ratios ${geometricMean(rs.map((r) => r.pairRatio)).toFixed(3)}x, ${pairOver.length} above ${limit}x`
  })
  if (cold.length > 0) summary.push(`cold start: geometric mean ${geometricMean(cold.map((r) => r.ratio)).toFixed(3)}x over ${cold.length} models`)
  return [...out, '', ...summary]
}
