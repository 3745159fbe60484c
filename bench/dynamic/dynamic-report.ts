// SPDX-License-Identifier: Apache-2.0
// bench:dynamic's figures from its children's answers: per-length rows, the planning figure, the memory
// summary of the random-length run, the table and the RSS chart (bench/memory's lineChart).
import { lineChart } from '../memory/svg-plot.js'
import { median, quantile, round } from '../models/cases.js'
import type { LengthsResult, Memory, PlanForResult, Probe, RandomResult } from './shared.js'

const MB = 1e6

export interface LengthRow {
  readonly length: number
  /** flexpipe's bucket of the length (lo..hi) and the shape that warmed it before the first call. */
  readonly bucket: string
  /** false: flexpipe's bucket has no template, so each of its shapes is planned on its own. */
  readonly templated: boolean
  readonly warm: number | null
  /** Median over processes of each process's median. */
  readonly flexpipeMs: number
  readonly flexpipeFirstNewMs?: number
  readonly flexpipeFirstSeenMs?: number
  /** flexpipe at seq maxLen with this length's tokens and mask zero beyond: the same figure for every length. */
  readonly paddedMs?: number
  readonly ortMs: number
  readonly ortFirstNewMs?: number
  readonly ortFirstSeenMs?: number
  readonly ratio: number
  readonly paddedOverDynamic?: number
  /** max |flexpipe - onnxruntime| over the probed output values (shared.ts Probe), last process of each. */
  readonly maxAbsDiff: number
  readonly processes: number
}

const medianOrUndefined = (xs: ReadonlyArray<number | undefined>): number | undefined => {
  const v = xs.filter((x): x is number => x !== undefined)
  return v.length === 0 ? undefined : median(v)
}

export function maxAbsDiff(a: Probe, b: Probe): number {
  let d = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) d = Math.max(d, Math.abs(a[i]! - b[i]!))
  return a.length === b.length ? d : NaN
}

export function lengthRows(fp: readonly LengthsResult[], ort: readonly LengthsResult[], bucketOf: (len: number) => string): LengthRow[] {
  const untemplated = new Set((fp.at(-1)?.buckets ?? []).filter((b) => !b.templated).map((b) => seqBucket(b.key)))
  const lengths = fp[0]?.lengths.map((l) => l.length) ?? []
  const padded = medianOrUndefined(fp.map((r) => (r.padded === undefined ? undefined : median(r.padded.samplesMs))))
  return lengths.map((length, k) => {
    const f = fp.map((r) => r.lengths[k]!)
    const o = ort.map((r) => r.lengths[k]!)
    const flexpipeMs = median(f.map((l) => median(l.samplesMs)))
    const ortMs = median(o.map((l) => median(l.samplesMs)))
    const row: LengthRow = {
      length,
      bucket: bucketOf(length),
      templated: !untemplated.has(bucketOf(length)),
      warm: f[0]!.warm,
      flexpipeMs: round(flexpipeMs),
      ...opt('flexpipeFirstNewMs', medianOrUndefined(f.map((l) => l.firstNewMs))),
      ...opt('flexpipeFirstSeenMs', medianOrUndefined(f.map((l) => l.firstRepeatMs))),
      ...opt('paddedMs', padded),
      ortMs: round(ortMs),
      ...opt('ortFirstNewMs', medianOrUndefined(o.map((l) => l.firstNewMs))),
      ...opt('ortFirstSeenMs', medianOrUndefined(o.map((l) => l.firstRepeatMs))),
      ratio: round(flexpipeMs / ortMs),
      ...opt('paddedOverDynamic', padded === undefined ? undefined : padded / flexpipeMs),
      maxAbsDiff: maxAbsDiff(f.at(-1)!.probe, o.at(-1)!.probe),
      processes: f.length,
    }
    return row
  })
}

function opt<K extends string>(key: K, v: number | undefined): Partial<Record<K, number>> {
  return v === undefined ? {} : ({ [key]: round(v) } as Record<K, number>)
}

export interface PlanForSummary {
  readonly shapes: number
  /** Shapes whose bucket has a template: BucketPlans.planFor alone, the first time. */
  readonly template: {
    readonly shapes: number
    readonly freshMs: { median: number; p90: number }
    /** planFor on the shape it was just called with (its program found, its shape constants in place). */
    readonly sameMs: { median: number; p90: number }
    /** planFor on the shape before (its program found, its shape constants written again when its bucket's slots hold another shape's). */
    readonly seenOtherMs: { median: number; p90: number }
    /** median over shapes of fresh - same. */
    readonly newShapeCostMs: number
    /** The same shapes new again on a second engine of the process (its JavaScript compiled by then). */
    readonly warmFreshMs: { median: number; p90: number }
  }
  /** Shapes of buckets without a template: Engine's planFor, which plans each such shape by itself. */
  readonly planned: { readonly shapes: number; readonly freshMs: { median: number; p90: number }; readonly sameMs: { median: number; p90: number } }
  readonly byBucket: Array<{ bucket: string; path: string; shapes: number; freshMedianMs: number }>
  readonly untemplated: Array<{ bucket: string; reason?: string }>
}

const mq = (xs: number[]) => (xs.length === 0 ? { median: NaN, p90: NaN } : { median: round(median(xs), 4), p90: round(quantile(xs, 0.9), 4) })

/** "batch=1..1,seq_len=5..8" -> "5..8". */
export const seqBucket = (key: string): string => /seq_len=(\d+\.\.\d+)/.exec(key)?.[1] ?? key

export function planForSummary(r: PlanForResult, bucketOf: (len: number) => string): PlanForSummary {
  const t = r.shapes.filter((s) => s.path === 'template')
  const p = r.shapes.filter((s) => s.path === 'planned')
  // shape k's otherMs is planFor on shape k - 1 again: it belongs to that shape's path
  const otherTemplate = r.shapes.flatMap((s, k) => (s.otherMs !== undefined && r.shapes[k - 1]?.path === 'template' ? [s.otherMs] : []))
  const buckets = new Map<string, { path: string; xs: number[] }>()
  for (const s of r.shapes) {
    const b = buckets.get(bucketOf(s.length)) ?? { path: s.path, xs: [] }
    b.xs.push(s.freshMs)
    buckets.set(bucketOf(s.length), b)
  }
  return {
    shapes: r.shapes.length,
    template: {
      shapes: t.length,
      freshMs: mq(t.map((s) => s.freshMs)),
      sameMs: mq(t.map((s) => s.sameMs)),
      seenOtherMs: mq(otherTemplate),
      newShapeCostMs: t.length === 0 ? NaN : round(median(t.map((s) => s.freshMs - s.sameMs)), 4),
      warmFreshMs: mq(r.shapes.flatMap((s, k) => (s.path === 'template' && r.warmFreshMs[k] !== undefined ? [r.warmFreshMs[k]!] : []))),
    },
    planned: { shapes: p.length, freshMs: mq(p.map((s) => s.freshMs)), sameMs: mq(p.map((s) => s.sameMs)) },
    byBucket: [...buckets].map(([bucket, b]) => ({ bucket, path: b.path, shapes: b.xs.length, freshMedianMs: round(median(b.xs), 4) })).sort((a, b) => Number(a.bucket.split('..')[0]) - Number(b.bucket.split('..')[0])),
    untemplated: r.buckets.filter((b) => !b.templated).map((b) => ({ bucket: seqBucket(b.key), ...(b.reason === undefined ? {} : { reason: b.reason }) })),
  }
}

export interface MemorySummary {
  readonly engine: string
  readonly idleRss: number
  readonly openedRss: number
  /** At the first sample once every bucket of the random lengths had been called (undefined: never within the run). */
  readonly coveredAtCalls?: number
  readonly coveredRss?: number
  readonly endCalls: number
  readonly endRss: number
  /** RssAnon and RssFile at the end (RssFile: pages of mapped files, such as a mapped model). */
  readonly endAnon: number
  readonly endFile: number
  /** endRss - coveredRss. */
  readonly drift?: number
  readonly peak: number
  readonly callMedianMs: number
  readonly seconds: number
}

export function memorySummary(engine: string, r: RandomResult, allBucketsAt: number | undefined): MemorySummary {
  const covered = allBucketsAt === undefined ? undefined : r.points.find((p) => p.calls >= allBucketsAt)
  const end = r.points.at(-1)!
  return {
    engine,
    idleRss: r.idle.rss,
    openedRss: r.opened.rss,
    ...(covered === undefined ? {} : { coveredAtCalls: covered.calls, coveredRss: covered.rss, drift: end.rss - covered.rss }),
    endCalls: end.calls,
    endRss: end.rss,
    endAnon: end.anon,
    endFile: end.file,
    peak: Math.max(...r.points.map((p) => p.hwm)),
    callMedianMs: round(r.callMs.median),
    seconds: round(r.seconds, 1),
  }
}

export function rssSvg(series: ReadonlyArray<{ label: string; idle: Memory; points: RandomResult['points'] }>, title: string): string {
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd']
  return lineChart({
    title,
    xLabel: 'calls',
    yLabel: 'RSS - idle process RSS (MB)',
    series: series.map((s, i) => ({ label: s.label, points: s.points.map((p) => [p.calls, (p.rss - s.idle.rss) / MB] as const), color: colors[i % colors.length]!, marker: 'circle', line: true })),
  })
}

const f1 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(1))
const f2 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(2))
const mb = (x: number | undefined) => (x === undefined ? '-' : (x / MB).toFixed(1))

function markdown(head: string[], rows: string[][], right: boolean[]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const fmt = (r: string[]) => `| ${r.map((x, i) => (right[i] ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join(' | ')} |`
  return [fmt(head), `|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...rows.map(fmt)]
}

export function lengthsTable(rows: readonly LengthRow[], maxLen: number): string[] {
  const head = ['seq', 'bucket', 'flexpipe ms', 'first call, new shape', 'first call, seen shape', `padded to ${maxLen}`, 'ort ms', 'ort first call', 'flexpipe/ort', 'padded/flexpipe', 'max |diff|']
  const body = rows.map((r) => [
    String(r.length),
    `${r.bucket}${r.templated ? '' : '*'}${r.warm === null ? '' : ` (warm ${r.warm})`}`,
    f1(r.flexpipeMs),
    f1(r.flexpipeFirstNewMs),
    f1(r.flexpipeFirstSeenMs),
    f1(r.paddedMs),
    f1(r.ortMs),
    f1(r.ortFirstNewMs),
    `${f2(r.ratio)}x`,
    r.paddedOverDynamic === undefined ? '-' : `${f2(r.paddedOverDynamic)}x`,
    r.maxAbsDiff.toExponential(1),
  ])
  return markdown(head, body, [true, false, true, true, true, true, true, true, true, true, true])
}

export function memoryTable(rows: readonly MemorySummary[]): string[] {
  const head = ['engine', 'idle process MB', 'after open MB', 'all buckets seen MB (at call)', 'end MB (calls)', 'drift MB', 'peak MB', 'end - idle MB', 'peak - idle MB', 'end anon / file MB', 'call median ms']
  const body = rows.map((r) => [
    r.engine,
    mb(r.idleRss),
    mb(r.openedRss),
    r.coveredRss === undefined ? '-' : `${mb(r.coveredRss)} (${r.coveredAtCalls})`,
    `${mb(r.endRss)} (${r.endCalls})`,
    r.drift === undefined ? '-' : `${r.drift >= 0 ? '+' : ''}${mb(r.drift)}`,
    mb(r.peak),
    mb(r.endRss - r.idleRss),
    mb(r.peak - r.idleRss),
    `${mb(r.endAnon)} / ${mb(r.endFile)}`,
    f1(r.callMedianMs),
  ])
  return markdown(head, body, [false, true, true, true, true, true, true, true, true, true, true])
}
