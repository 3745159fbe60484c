// SPDX-License-Identifier: Apache-2.0
// A plan's memory layout drawn as the FlexNN paper draws memory plans (its time x address figure): x is
// the program's ops, y the arena address (0 at the bottom), one rectangle per planned buffer of the
// ExecutionPlan the engine applies (ExecutionPlan.buffers), coloured by what it holds. Pure: a plan and
// a few words about it in, SVG text out (`flexpipe plan --svg`).
import { bufferOffset, loadBytes, type BufferKind, type ExecutionPlan, type PlannedBuffer } from '../execution-plan.js'
import type { ElasticPlan } from '../elastic/types.js'
import { element, escapeXml, niceTicks, num, text } from './svg-text.js'

/** What the picture says about the plan beside the plan itself. */
export interface PlanCaption {
  /** The file planned (its base name is shown). */
  readonly model: string
  readonly kind: 'onnx' | 'budget' | 'elastic'
  /** The memory budget the plan was made for (memory-budget packages). */
  readonly budgetBytes?: number
  readonly elastic?: ElasticCaption
}

/** An elastic plan's sub-model and shard versions, and the full model's size. */
export interface ElasticCaption {
  readonly plan: Pick<ElasticPlan, 'planner' | 'targetMs' | 'depth' | 'width' | 'shards' | 'modelledMs'>
  readonly layers: number
  readonly heads: number
  /** Measured / modelled time the plan allows for (ElasticStats.latencyFactor): above 1.05 it aims at 1.05 T / factor. */
  readonly latencyFactor?: number
  /** The measured times say no sub-model meets T: the plan in force stays (ElasticStats.targetAtRisk). */
  readonly targetAtRisk?: boolean
}

export type DrawnPlan = Pick<ExecutionPlan, 'arenaBytes' | 'activationBase' | 'buffers' | 'opNodes' | 'regions' | 'loads'>

/** The plot in the picture, in pixels: x = left + op * width / ops, y = top + height - address * height / arena bytes. */
export const plotArea = { left: 96, top: 112, width: 720, height: 400 } as const

const pictureWidth = 960
const line = 18

/** Colour and legend text per kind (Okabe-Ito colours, told apart with colour-blind sight too). */
const kinds: Readonly<Record<BufferKind, { readonly colour: string; readonly label: string }>> = {
  resident: { colour: '#999999', label: 'constants and weights kept resident' },
  pinned: { colour: '#009e73', label: 'weights pinned (read once, kept)' },
  loaded: { colour: '#e69f00', label: 'weights loaded during each inference' },
  preloaded: { colour: '#cc79a7', label: 'shards in the preload buffer' },
  staged: { colour: '#d55e00', label: 'shards staged during each inference' },
  'input-rows': { colour: '#f0e442', label: 'embedding rows read for each inference' },
  activation: { colour: '#0072b2', label: 'activations' },
  intermediate: { colour: '#56b4e9', label: 'intermediates (workspaces)' },
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 1)} MB`

export function planSvg(plan: DrawnPlan, caption: PlanCaption): string {
  const ops = plan.opNodes.length
  const scale = { x: plotArea.width / Math.max(1, ops), y: plotArea.height / Math.max(1, plan.arenaBytes) }
  const below = plotArea.top + plotArea.height + 2.5 * line
  const legend = legendRows(plan.buffers, below + line)
  const table = caption.elastic === undefined ? { svg: [], height: 0 } : bitsTable(caption.elastic, below + line + legend.height + line)
  const height = below + line + legend.height + table.height + line
  const title = `Memory plan of ${baseName(caption.model)}`
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pictureWidth}" height="${num(height)}" viewBox="0 0 ${pictureWidth} ${num(height)}" font-family="sans-serif" font-size="12">`,
    element('title', {}, [escapeXml(title)]),
    element('rect', { width: pictureWidth, height, fill: '#ffffff' }),
    element('g', { id: 'caption' }, captionLines(plan, caption, title)),
    element('rect', { x: plotArea.left, y: plotArea.top, width: plotArea.width, height: plotArea.height, fill: '#f7f7f7', stroke: '#444444' }),
    element('g', { id: 'regions' }, regionMarks(plan, scale.y)),
    element('g', { id: 'buffers', 'stroke-width': 0.5 }, plan.buffers.map((b) => bufferRect(plan, b, scale))),
    element('g', { id: 'axes' }, axes(plan, ops)),
    element('g', { id: 'legend' }, legend.svg),
    element('g', { id: 'bits' }, table.svg),
    '</svg>',
    '',
  ].join('\n')
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path
}

/** The title and what the plan is: budget, arena, peak, ops and loads; an elastic plan's sub-model. */
function captionLines(plan: DrawnPlan, caption: PlanCaption, title: string): string[] {
  const peak = peakLive(plan.buffers, plan.opNodes.length)
  const loads = plan.loads === undefined ? 0 : plan.loads.after.length
  const budget = caption.budgetBytes !== undefined ? `budget ${mb(caption.budgetBytes)}` : caption.kind === 'onnx' ? 'no budget (every weight in memory)' : 'no budget'
  const reads = loads === 0 ? 'no loads during an inference' : `${loads} loads per inference (${mb(loadBytes(plan))})`
  const lines = [`${budget} · arena ${mb(plan.arenaBytes)} · peak ${mb(peak.bytes)} taken at op ${peak.op} · ${plan.opNodes.length} ops · ${reads}`]
  const e = caption.elastic
  if (e !== undefined) {
    const p = e.plan
    const f = e.latencyFactor ?? 1
    const factor = e.targetAtRisk ? ` (at risk: measured / modelled time ${f.toFixed(2)} here, no sub-model meets T; this plan stays)` : f > 1.05 ? ` (aimed at 1.05 T / ${f.toFixed(2)}, the measured / modelled time here)` : ''
    lines.push(p.planner === 'full-model' ? 'full model, no target latency' : `target ${p.targetMs} ms · ${p.planner} planner · modelled ${p.modelledMs.toFixed(1)} ms${factor}`)
    lines.push(`sub-model: ${p.depth} of ${e.layers} layers × ${p.width} of ${e.heads} heads kept; shard bitwidths in the table below`)
  }
  return [
    text(plotArea.left, 28, title, { 'font-size': 16, 'font-weight': 'bold' }),
    ...lines.map((l, i) => text(plotArea.left, 28 + (i + 1) * line, l)),
  ]
}

/** The most bytes the buffers take at one op, and the first op where they do. */
export function peakLive(buffers: readonly PlannedBuffer[], ops: number): { bytes: number; op: number } {
  const diff = new Float64Array(ops + 1)
  for (const b of buffers) {
    if (b.to < b.from) continue
    diff[Math.max(0, b.from)]! += b.bytes
    diff[Math.min(ops, b.to + 1)]! -= b.bytes
  }
  let live = 0
  let peak = { bytes: 0, op: 0 }
  for (let k = 0; k < ops; k++) {
    live += diff[k]!
    if (live > peak.bytes) peak = { bytes: live, op: k }
  }
  return peak
}

/** One buffer: its lifetime across, its bytes up; the tooltip names it. */
function bufferRect(plan: DrawnPlan, b: PlannedBuffer, scale: { x: number; y: number }): string {
  const offset = bufferOffset(plan, b)
  const tip = `${b.name}: ${b.kind}, ${b.bytes} bytes at ${offset}, ops ${b.from}..${b.to}`
  return element(
    'rect',
    {
      x: plotArea.left + b.from * scale.x,
      y: plotArea.top + plotArea.height - (offset + b.bytes) * scale.y,
      width: Math.max(0, b.to - b.from + 1) * scale.x,
      height: b.bytes * scale.y,
      fill: kinds[b.kind].colour,
      stroke: '#333333',
      'data-kind': b.kind,
    },
    [element('title', {}, [escapeXml(tip)])],
  )
}

/** A dashed line where each region of the arena starts, named at the plot's right when there is room. */
function regionMarks(plan: DrawnPlan, scaleY: number): string[] {
  const out: string[] = []
  let lastLabel = Infinity
  for (const r of [...plan.regions].filter((r) => r.bytes > 0).sort((a, b) => a.offset - b.offset)) {
    const y = plotArea.top + plotArea.height - r.offset * scaleY
    const mid = plotArea.top + plotArea.height - (r.offset + r.bytes / 2) * scaleY
    out.push(element('line', { x1: plotArea.left, x2: plotArea.left + plotArea.width, y1: y, y2: y, stroke: '#888888', 'stroke-dasharray': '4 3' }))
    if (r.bytes * scaleY >= 12 && lastLabel - mid >= 12) {
      out.push(text(plotArea.left + plotArea.width + 6, mid + 4, r.name, { fill: '#555555', 'font-size': 11 }))
      lastLabel = mid
    }
  }
  return out
}

/** Address ticks in MB on the left, op ticks below, and both axis titles. */
function axes(plan: DrawnPlan, ops: number): string[] {
  const bottom = plotArea.top + plotArea.height
  const out: string[] = []
  const mbTicks = niceTicks(plan.arenaBytes / 1e6, 6)
  const digits = Math.max(0, -Math.floor(Math.log10(mbTicks[1] ?? 1)))
  for (const v of mbTicks) {
    const y = bottom - (v * 1e6 * plotArea.height) / Math.max(1, plan.arenaBytes)
    out.push(element('line', { x1: plotArea.left - 5, x2: plotArea.left, y1: y, y2: y, stroke: '#444444' }))
    out.push(text(plotArea.left - 8, y + 4, `${v.toFixed(digits)} MB`, { 'text-anchor': 'end' }))
  }
  for (const k of niceTicks(ops, 10, true)) {
    const x = plotArea.left + (k * plotArea.width) / Math.max(1, ops)
    out.push(element('line', { x1: x, x2: x, y1: bottom, y2: bottom + 5, stroke: '#444444' }))
    out.push(text(x, bottom + line, String(k), { 'text-anchor': 'middle' }))
  }
  out.push(text(plotArea.left + plotArea.width / 2, bottom + 2 * line, 'time: op of the program (a buffer spans the ops that hold it)', { 'text-anchor': 'middle' }))
  const mid = plotArea.top + plotArea.height / 2
  out.push(text(20, mid, 'arena address', { 'text-anchor': 'middle', transform: `rotate(-90 20 ${num(mid)})` }))
  return out
}

/** A swatch per kind the plan has, with how many buffers, two to a row. */
function legendRows(buffers: readonly PlannedBuffer[], top: number): { svg: string[]; height: number } {
  const count = new Map<BufferKind, number>()
  for (const b of buffers) count.set(b.kind, (count.get(b.kind) ?? 0) + 1)
  const present = (Object.keys(kinds) as BufferKind[]).filter((k) => count.has(k))
  const svg = present.flatMap((k, i) => {
    const x = plotArea.left + (i % 2) * (plotArea.width / 2)
    const y = top + Math.floor(i / 2) * line
    return [
      element('rect', { x, y: y - 10, width: 14, height: 12, fill: kinds[k].colour, stroke: '#333333', 'stroke-width': 0.5 }),
      text(x + 20, y, `${kinds[k].label} (${count.get(k)})`),
    ]
  })
  return { svg, height: Math.ceil(present.length / 2) * line }
}

/** The shard versions of an elastic plan: a row per layer kept, a column per head kept. */
function bitsTable(e: ElasticCaption, top: number): { svg: string[]; height: number } {
  const x0 = plotArea.left + 80
  const cell = Math.min(48, (pictureWidth - x0 - 24) / Math.max(1, e.plan.width))
  const svg = [text(plotArea.left, top, 'shard bitwidths (fp32: unquantized; p: held in the preload buffer)'), text(plotArea.left, top + line, 'head', { fill: '#555555' })]
  for (let j = 0; j < e.plan.width; j++) svg.push(text(x0 + j * cell, top + line, String(j), { 'text-anchor': 'middle', fill: '#555555' }))
  e.plan.shards.slice(0, e.plan.depth).forEach((row, l) => {
    const y = top + (l + 2) * line
    svg.push(text(plotArea.left, y, `layer ${l}`, { fill: '#555555' }))
    row.forEach((s, j) => svg.push(text(x0 + j * cell, y, `${s.bits === 32 ? 'fp32' : s.bits}${s.preloaded ? ' p' : ''}`, { 'text-anchor': 'middle' })))
  })
  return { svg, height: (e.plan.depth + 2) * line }
}
