// SPDX-License-Identifier: Apache-2.0
// A small SVG line chart (linear axes or a logarithmic x axis, "nice" 1-2-5 ticks, legend): a polyline
// per curve and a marker per point, enough for the latency-memory plots of the memory benchmark and the
// accuracy-memory plots of the elastic one; `panels` sets several charts side by side.
import { escapeXml } from '../../lib/plan/draw/svg-text.js'

export type Marker = 'circle' | 'square' | 'triangle' | 'diamond' | 'cross'

export interface PlotSeries {
  readonly label: string
  readonly points: ReadonlyArray<readonly [number, number]>
  readonly color: string
  readonly marker: Marker
  /** Join the points (sorted by x) with a line; baselines are lone markers. */
  readonly line?: boolean
  readonly dashed?: boolean
  /** Outline markers (white fill), to tell a second condition apart without a second colour. */
  readonly hollow?: boolean
}

export interface PlotSpec {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly series: readonly PlotSeries[]
  /** Logarithmic x axis (every x must be > 0). */
  readonly xLog?: boolean
  /** The y axis range (default: 0 to a little above the largest value). */
  readonly yRange?: readonly [number, number]
  readonly width?: number
  readonly height?: number
}

const fmt = (v: number) => String(Number(v.toPrecision(6)))

/** Tick values covering [lo, hi] at a 1, 2 or 5 x 10^k step, about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 6): number[] {
  if (!(hi > lo)) return [lo]
  const raw = (hi - lo) / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag
  const ticks: number[] = []
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  return ticks
}

function markerSvg(m: Marker, x: number, y: number, color: string, hollow = false): string {
  const r = 4
  const paint = hollow ? `fill="white" stroke="${color}" stroke-width="1.5"` : `fill="${color}"`
  const at = (pts: Array<[number, number]>) => pts.map(([dx, dy]) => `${fmt(x + dx)},${fmt(y + dy)}`).join(' ')
  switch (m) {
    case 'circle':
      return `<circle cx="${fmt(x)}" cy="${fmt(y)}" r="${r}" ${paint}/>`
    case 'square':
      return `<rect x="${fmt(x - r)}" y="${fmt(y - r)}" width="${2 * r}" height="${2 * r}" ${paint}/>`
    case 'triangle':
      return `<polygon points="${at([[0, -r - 1], [r + 1, r], [-r - 1, r]])}" ${paint}/>`
    case 'diamond':
      return `<polygon points="${at([[0, -r - 1], [r + 1, 0], [0, r + 1], [-r - 1, 0]])}" ${paint}/>`
    case 'cross':
      return `<path d="M${fmt(x - r)},${fmt(y - r)}L${fmt(x + r)},${fmt(y + r)}M${fmt(x - r)},${fmt(y + r)}L${fmt(x + r)},${fmt(y - r)}" stroke="${color}" stroke-width="2"/>`
  }
}

/** Axis range from 0 (memory and latency are both ratio scales) to a little above the largest value. */
function range(values: number[]): [number, number] {
  const hi = Math.max(...values, 0)
  const ticks = niceTicks(0, hi > 0 ? hi * 1.05 : 1)
  return [0, Math.max(ticks[ticks.length - 1]!, hi * 1.05)]
}

/** The 1-2-5 x 10^k values at or below lo and above hi, and those in between (log-axis ticks). */
function logAxis(values: number[]): { range: [number, number]; ticks: number[] } {
  const lo = Math.min(...values) / 1.1
  const hi = Math.max(...values) * 1.1
  const steps: number[] = []
  for (let k = Math.floor(Math.log10(lo)) - 1; k <= Math.ceil(Math.log10(hi)); k++) for (const m of [1, 2, 5]) steps.push(Number((m * 10 ** k).toPrecision(12)))
  const first = steps.filter((v) => v <= lo).pop() ?? steps[0]!
  const last = steps.find((v) => v >= hi) ?? steps[steps.length - 1]!
  return { range: [first, last], ticks: steps.filter((v) => v >= first && v <= last) }
}

export function lineChart(spec: PlotSpec): string {
  const width = spec.width ?? 760
  const height = spec.height ?? 460
  const m = { left: 70, right: 200, top: 40, bottom: 55 }
  const pw = width - m.left - m.right
  const ph = height - m.top - m.bottom
  const all = spec.series.flatMap((s) => s.points)
  const log = spec.xLog === true ? logAxis(all.map((p) => p[0])) : undefined
  const [x0, x1] = log?.range ?? range(all.map((p) => p[0]))
  const [y0, y1] = spec.yRange ?? range(all.map((p) => p[1]))
  const tx = (x: number) => (log === undefined ? x : Math.log10(x))
  const sx = (x: number) => m.left + ((tx(x) - tx(x0)) / (tx(x1) - tx(x0))) * pw
  const sy = (y: number) => m.top + ph - ((y - y0) / (y1 - y0)) * ph
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`)
  out.push(`<text x="${m.left + pw / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(spec.title)}</text>`)
  for (const v of log?.ticks ?? niceTicks(x0, x1)) {
    const x = fmt(sx(v))
    out.push(`<line x1="${x}" y1="${m.top}" x2="${x}" y2="${m.top + ph}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${x}" y="${m.top + ph + 18}" text-anchor="middle">${fmt(v)}</text>`)
  }
  for (const v of niceTicks(y0, y1)) {
    const y = fmt(sy(v))
    out.push(`<line x1="${m.left}" y1="${y}" x2="${m.left + pw}" y2="${y}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${m.left - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt(v)}</text>`)
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`)
  out.push(`<text x="${m.left + pw / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`)
  out.push(`<text transform="translate(18 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`)
  for (const s of spec.series) {
    const pts = s.line ? [...s.points].sort((a, b) => a[0] - b[0]) : s.points
    if (s.line && pts.length > 1) {
      const d = pts.map(([x, y]) => `${fmt(sx(x))},${fmt(sy(y))}`).join(' ')
      out.push(`<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`)
    }
    for (const [x, y] of pts) out.push(markerSvg(s.marker, sx(x), sy(y), s.color, s.hollow))
  }
  spec.series.forEach((s, i) => {
    const x = m.left + pw + 16
    const y = m.top + 10 + i * 20
    if (s.line) out.push(`<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`)
    out.push(markerSvg(s.marker, x + 12, y, s.color, s.hollow))
    out.push(`<text x="${x + 32}" y="${y}" dominant-baseline="middle">${escapeXml(s.label)}</text>`)
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** Charts side by side in one SVG (each keeps its own axes and legend). */
export function panels(specs: readonly PlotSpec[]): string {
  const charts = specs.map((s) => ({ w: s.width ?? 760, h: s.height ?? 460, svg: lineChart(s) }))
  const width = charts.reduce((a, c) => a + c.w, 0)
  const height = Math.max(...charts.map((c) => c.h))
  let x = 0
  const inner = charts.map((c) => {
    const nested = c.svg.replace('<svg xmlns="http://www.w3.org/2000/svg" ', `<svg x="${x}" y="0" `)
    x += c.w
    return nested.trimEnd()
  })
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">\n${inner.join('\n')}\n</svg>\n`
}
