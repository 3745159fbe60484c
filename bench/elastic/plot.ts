// SPDX-License-Identifier: Apache-2.0
// bench/results/elastic-<io>.svg: dev accuracy against resident memory (log x), one panel per T;
// flexpipe's preload settings joined by a line, one marker per baseline (seed Figure 7).
import { panels, type Marker, type PlotSeries, type PlotSpec } from '../memory/svg-plot.js'
import { MiB, type IoMode, type Row } from './configs.js'
import { targetLabel } from './report.js'
import type { Target } from './options.js'

const style: Readonly<Record<string, { color: string; marker: Marker }>> = {
  'Load&Exec': { color: '#d62728', marker: 'square' },
  'StdPL-full': { color: '#ff7f0e', marker: 'triangle' },
  'StdPL-2bit': { color: '#bcbd22', marker: 'triangle' },
  'StdPL-6bit': { color: '#8c564b', marker: 'triangle' },
  'PreloadModel-full': { color: '#2ca02c', marker: 'diamond' },
  'PreloadModel-6bit': { color: '#17becf', marker: 'diamond' },
}

const point = (r: Row): readonly [number, number] | undefined =>
  r.accuracy === undefined || r.residentBytes === undefined ? undefined : ([r.residentBytes / MiB, 100 * r.accuracy] as const)

function panel(rows: readonly Row[], t: Target): PlotSpec {
  const mine = rows.filter((r) => r.target === t.name)
  const flex = mine.filter((r) => r.config.startsWith('flexpipe')).map(point).filter((p) => p !== undefined)
  const series: PlotSeries[] = [{ label: 'flexpipe 0/1/5 MB', points: flex, color: '#1f77b4', marker: 'circle', line: true }]
  for (const [label, s] of Object.entries(style)) {
    const p = mine.filter((r) => r.config === label).map(point).filter((x) => x !== undefined)
    if (p.length > 0) series.push({ label, points: p, ...s })
  }
  const ys = series.flatMap((s) => s.points.map((p) => p[1]))
  // A tight y range: the configurations often differ by a few dev examples.
  const lo = ys.length === 0 ? 0 : Math.max(0, Math.floor(Math.min(...ys)) - 1)
  const hi = ys.length === 0 ? 100 : Math.min(100, Math.ceil(Math.max(...ys)) + 1)
  return {
    title: targetLabel(t),
    xLabel: 'resident memory, MB = 2^20 B (log)',
    yLabel: 'dev accuracy, %',
    series: series.filter((s) => s.points.length > 0),
    xLog: true,
    yRange: [lo, hi],
    width: 600,
    height: 420,
  }
}

export function accuracyMemoryPlot(rows: readonly Row[], io: IoMode, targets: readonly Target[]): string {
  const mine = rows.filter((r) => r.io === io)
  const specs = targets.map((t) => panel(mine, t)).filter((s) => s.series.length > 0)
  const first = specs[0]
  if (first !== undefined) specs[0] = { ...first, title: `${io} IO: ${first.title}` }
  return panels(specs)
}
