// SPDX-License-Identifier: Apache-2.0
// Slice arguments (attributes before opset 10, inputs after) and ONNX's clamping rules, also on
// symbolic dims (where an in-range slice is assumed; the concrete plan recomputes exactly).
import { attrInts } from '../attrs.js'
import { dimAdd, dimCeilDiv, dimSub, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import type { OpContext } from './op-def.js'
import { input, knownDims, requireNumbers, shapeError, valueNeeded } from './op-util.js'
import { axisOf } from './tensor-util.js'

export interface SliceSpec {
  readonly axis: number
  readonly start: Dim
  readonly end: Dim
  readonly step: number
}

/** Bounds at or beyond this magnitude mean "to the end" (PyTorch exports INT64_MAX). */
const unbounded = 2 ** 31 - 1

function bounds(ctx: OpContext, i: number, what: string): readonly Dim[] {
  input(ctx, i)
  const v = knownDims(ctx, i)
  if (v === undefined) throw valueNeeded(ctx, i, what)
  return v
}

/** The sliced axes with their starts, ends and steps, in the order given. */
export function sliceSpec(ctx: OpContext, rank: number): SliceSpec[] {
  let starts: readonly Dim[]
  let ends: readonly Dim[]
  let axes: number[] | undefined
  let steps: number[] | undefined
  if (ctx.opset < 10) {
    starts = attrInts(ctx.node, 'starts', [])
    ends = attrInts(ctx.node, 'ends', [])
    axes = attrInts(ctx.node, 'axes')
  } else {
    starts = bounds(ctx, 1, 'starts')
    ends = bounds(ctx, 2, 'ends')
    axes = ctx.inputs[3] ? requireNumbers(ctx, 3, 'axes') : undefined
    steps = ctx.inputs[4] ? requireNumbers(ctx, 4, 'steps') : undefined
  }
  const n = starts.length
  const ax = axes ?? starts.map((_, i) => i)
  if (ends.length !== n || ax.length !== n || (steps !== undefined && steps.length !== n)) {
    throw shapeError(ctx, 'starts, ends, axes and steps must have the same length')
  }
  const specs = ax.map((a, i) => ({
    axis: axisOf(ctx, a, rank),
    start: starts[i]!,
    end: ends[i]!,
    step: steps?.[i] ?? 1,
  }))
  if (new Set(specs.map((s) => s.axis)).size !== n) throw shapeError(ctx, 'axes repeat an axis')
  for (const s of specs) if (s.step === 0) throw shapeError(ctx, `step on axis ${s.axis} is 0`)
  return specs
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi)

/** First index read on the axis and the number of elements taken. */
export function sliceAxis(ctx: OpContext, dim: Dim, s: SliceSpec): { start: Dim; count: Dim } {
  const { start, end, step } = s
  if (isConcrete(dim) && isConcrete(start) && isConcrete(end)) {
    let st = start < 0 ? start + dim : start
    let en = end < 0 ? end + dim : end
    if (step > 0) {
      st = clamp(st, 0, dim)
      en = clamp(en, 0, dim)
    } else {
      st = clamp(st, 0, dim - 1)
      en = clamp(en, -1, dim - 1)
    }
    return { start: st, count: Math.max(0, Math.ceil((en - st) / step)) }
  }
  if (step < 0) {
    return { start: `slice_start(${dim},${start},${step})`, count: `slice(${dim},${start},${end},${step})` }
  }
  // Symbolic: positions are offsets from the start (numbers >= 0), from the end, or symbols.
  const pos = (v: Dim, isEnd: boolean): Dim => {
    if (!isConcrete(v)) return v
    if (isEnd && v >= unbounded) return dim
    if (v <= -unbounded) return 0
    return v < 0 ? dimAdd(dim, v) : v
  }
  const st = pos(start, false)
  const en = pos(end, true)
  let span: Dim
  if (isConcrete(start) && isConcrete(end) && start < 0 && end < 0 && end > -unbounded) span = Math.max(0, end - start)
  else if (isConcrete(start) && start < 0 && start > -unbounded && en === dim) span = -start
  else span = dimSub(en, st)
  if (isConcrete(span)) span = Math.max(0, span)
  return { start: st, count: step === 1 ? span : dimCeilDiv(span, step) }
}
