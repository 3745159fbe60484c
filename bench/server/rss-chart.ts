// SPDX-License-Identifier: Apache-2.0
// The load test's RSS plot: each server's RSS above its RSS before the models opened, block by block,
// and the server alone plus the memory budget, the line the budgeted engine's series must stay under.
import { lineChart, type PlotSeries } from '../memory/svg-plot.js'

export interface RssSeries {
  readonly label: string
  /** The legend's name (the labels are too long for it). */
  readonly short: string
  readonly budgetBytes?: number
  readonly rssBeforeModels: number
  readonly points: readonly { readonly requests: number; readonly rss: number }[]
}

const colors = ['#7f7f7f', '#1f77b4', '#2ca02c', '#d62728', '#9467bd']

/** `series[0]` is the server alone. */
export function rssChart(series: readonly RssSeries[], rate: number): string {
  const above = (r: RssSeries, k: number) => (r.points[k]!.rss - r.rssBeforeModels) / 1e6
  const alone = series[0]!
  const budget = series.find((r) => r.budgetBytes !== undefined)?.budgetBytes
  const lines: PlotSeries[] = series.map((r, i) => ({ label: r.short, points: r.points.map((p, k) => [p.requests, above(r, k)] as const), color: colors[i % colors.length]!, marker: 'circle', line: true }))
  if (budget !== undefined) {
    lines.push({ label: `alone + ${budget / 1e6} MB budget`, points: alone.points.map((p, k) => [p.requests, above(alone, k) + budget / 1e6] as const), color: colors[2]!, marker: 'cross', line: true, dashed: true })
  }
  return lineChart({
    title: `Server RSS over ${alone.points.at(-1)!.requests} requests (MobileNetV2, 8 connections, ${rate} requests/s)`,
    xLabel: 'requests served',
    yLabel: 'RSS - RSS before models (MB)',
    series: lines,
  })
}
