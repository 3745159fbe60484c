// SPDX-License-Identifier: Apache-2.0
// One attempt at the preload-aware plan for a fixed arena size and pinned set (steps 0-4 of preload-plan.ts).
import { alignDown } from '../../align.js'
import { bestFit, firstFit, lastFit, type BusyList } from './address-space.js'
import { Occupancy } from './occupancy.js'
import { busiestStep, kindWeight, weightAlignment, type Prepared } from './preload-problem.js'

export interface Attempt {
  readonly offset: Float64Array
  readonly allocStep: Int32Array
  readonly pinned: Uint8Array
  readonly pinnedBytes: number
  readonly fallbackSteps: readonly number[]
}

/**
 * A plan, or the step at which it did not fit and the preloaded weights of earlier steps still
 * occupying it (candidates to place without preload in the next attempt).
 */
export type AttemptResult =
  | { readonly ok: true; readonly attempt: Attempt }
  | { readonly ok: false; readonly step: number; readonly blame: readonly number[] }

/** Weights used first by the leading k steps, in execution order (largest first within a step). */
export function leadingWeights(prep: Prepared, k: number): number[] {
  return prep.weightsAt.slice(0, k).flat()
}

/**
 * Which weights an attempt pins: a number k is the weights first used by the leading k steps, a list
 * of steps the weights first used by those steps.
 */
export type PinSteps = number | readonly number[]

/** The weights `pins` selects, in step order (largest first within a step). */
export function pinnedWeights(prep: Prepared, pins: PinSteps): number[] {
  if (typeof pins === 'number') return leadingWeights(prep, pins)
  return [...new Set(pins)].sort((a, b) => a - b).flatMap((s) => prep.weightsAt[s] ?? [])
}

/** Bytes of the weights first used by each step (index = step). */
export function bytesByStep(prep: Prepared): Float64Array {
  return Float64Array.from(prep.weightsAt, (ws) => ws.reduce((sum, w) => sum + prep.size[w]!, 0))
}

/** Bytes of the weights `leadingWeights(prep, k)` returns, for every k (index = k). */
export function pinnedBytesByK(prep: Prepared): Float64Array {
  const bytes = new Float64Array(prep.steps + 1)
  for (let s = 0; s < prep.steps; s++) {
    bytes[s + 1] = bytes[s]! + prep.weightsAt[s]!.reduce((sum, w) => sum + prep.size[w]!, 0)
  }
  return bytes
}

/** Makes `to` a copy of `from` without allocating (beyond growing `to`). */
function copyInto(to: BusyList, from: BusyList): void {
  to.length = from.length
  for (let i = 0; i < from.length; i++) to[i] = from[i]!
}

class Placer {
  readonly occ: Occupancy
  readonly offset: Float64Array
  readonly allocStep: Int32Array
  readonly pinned: Uint8Array
  readonly fallbackSteps: number[] = []
  /** Top of the region shared by activations, intermediates and loaded weights: [0, top). */
  top = 0
  /** placeWeight's copy of the last window that fitted (reused across weights). */
  private readonly scratch: BusyList = []

  constructor(
    readonly prep: Prepared,
    readonly noPreload: Uint8Array,
  ) {
    this.occ = new Occupancy(prep.count, prep.steps)
    this.offset = new Float64Array(prep.count)
    this.allocStep = Int32Array.from(prep.first)
    this.pinned = new Uint8Array(prep.count)
  }

  put(id: number, offset: number, from: number): void {
    this.offset[id] = offset
    this.allocStep[id] = from
    this.occ.place(id, offset, this.prep.size[id]!, from, this.prep.last[id]!)
  }

  /** Step 0: the pinned weights fill the top of the arena, first-used highest; returns false if they do not fit. */
  pin(weights: readonly number[], limit: number): boolean {
    let top = alignDown(limit, weightAlignment)
    for (const w of weights) {
      top -= this.prep.size[w]!
      this.offset[w] = top
      this.allocStep[w] = 0
      this.pinned[w] = 1
    }
    this.top = weights.length > 0 ? top : limit
    return top >= 0
  }

  /** Step 1: an activation goes to whichever end of the region it intrudes less from (ties: bottom). */
  placeActivation(a: number): boolean {
    const { size, first, last, alignment } = this.prep
    const busy = this.occ.busyOver(first[a]!, last[a]!)
    const low = firstFit(busy, size[a]!, alignment, 0, this.top)
    if (low < 0) return false
    const high = lastFit(busy, size[a]!, alignment, 0, this.top)
    this.put(a, low + size[a]! <= this.top - high ? low : high, first[a]!)
    return true
  }

  /** Step 2: a weight starts loading as early as memory allows (from 0 to first), at the best-fitting gap. */
  placeWeight(w: number, preload: boolean): boolean {
    const { size, first, last } = this.prep
    let busy = this.occ.busyOver(first[w]!, last[w]!)
    const fits = (b: BusyList): boolean => firstFit(b, size[w]!, weightAlignment, 0, this.top) >= 0
    if (!fits(busy)) return false
    let from = first[w]!
    // Earliest feasible start: widening the window only adds busy ranges, so scan down until it stops
    // fitting. Each step down costs one merge of the ranges that end there (a binary search would
    // rebuild the window's busy list per probe, which costs as much as this whole scan). The window that
    // fitted is kept in one reused array, not a fresh copy per step: those copies were 18 of the 89 MB
    // that opening ResNet-152 at 100 MB allocated (with addBusy's splice gone too: 59 MB).
    const fitted = this.scratch
    while (preload && this.noPreload[w] === 0 && size[w]! > 0 && from > 0) {
      copyInto(fitted, busy)
      this.occ.extendEarlier(busy, from) // busy covers [from - 1, last]
      if (!fits(busy)) {
        copyInto(busy, fitted)
        break
      }
      from--
    }
    this.put(w, bestFit(busy, size[w]!, weightAlignment, 0, this.top), from)
    return true
  }

  /** Step 3: an intermediate (live only during its step) goes to the best-fitting gap. */
  placeIntermediate(i: number): boolean {
    const { size, first, last, alignment } = this.prep
    const offset = bestFit(this.occ.busyOver(first[i]!, last[i]!), size[i]!, alignment, 0, this.top)
    if (offset < 0) return false
    this.put(i, offset, first[i]!)
    return true
  }

  /** Steps 2 and 3 for one compute step; on failure the step's placements are undone. */
  placeStep(s: number, preload: boolean): boolean {
    const weights = this.prep.weightsAt[s]!.filter((w) => this.pinned[w] === 0)
    const placed: number[] = []
    for (const id of [...weights, ...this.prep.intermediatesAt[s]!]) {
      const ok = this.prep.kind[id] === 0 ? this.placeWeight(id, preload) : this.placeIntermediate(id)
      if (!ok) {
        for (const p of placed) this.occ.remove(p)
        return false
      }
      placed.push(id)
    }
    return true
  }

  /** Weights of earlier steps that still occupy step s and were preloaded. */
  preloadedAcross(s: number): number[] {
    const { kind, first, last } = this.prep
    const out: number[] = []
    for (let w = 0; w < this.prep.count; w++) {
      if (kind[w] === kindWeight && this.pinned[w] === 0 && first[w]! < s && last[w]! >= s && this.allocStep[w]! < first[w]!) out.push(w)
    }
    return out
  }
}

/**
 * Plans every tensor inside [0, limit) with the weights `pins` selects pinned and the weights marked
 * in `noPreload` loaded at their first step. Returns the failing step when something does not fit.
 */
export function attemptPlan(prep: Prepared, limit: number, pins: PinSteps, preload: boolean, noPreload: Uint8Array): AttemptResult {
  const placer = new Placer(prep, noPreload)
  const pinned = pinnedWeights(prep, pins)
  const lastPinned = typeof pins === 'number' ? Math.max(0, pins - 1) : prep.steps - 1
  if (!placer.pin(pinned, limit)) return { ok: false, step: busiestStep(prep, 0, lastPinned), blame: [] }
  for (const a of prep.activations) {
    if (!placer.placeActivation(a)) return { ok: false, step: busiestStep(prep, prep.first[a]!, prep.last[a]!), blame: [] }
  }
  for (let s = 0; s < prep.steps; s++) {
    if (placer.placeStep(s, preload)) continue
    // Step 4: greedy preloading fragmented this step; re-plan its weights without preload.
    if (!preload || !placer.placeStep(s, false)) return { ok: false, step: s, blame: placer.preloadedAcross(s) }
    placer.fallbackSteps.push(s)
  }
  const pinnedBytes = pinned.reduce((sum, w) => sum + prep.size[w]!, 0)
  const { offset, allocStep, fallbackSteps } = placer
  return { ok: true, attempt: { offset, allocStep, pinned: placer.pinned, pinnedBytes, fallbackSteps } }
}

/** Attempts beyond the first in which blamed weights lose their preload before preload is dropped altogether. */
const blameRounds = 3

/**
 * attemptPlan with a fallback wider than the seed's step 4, which can only undo the failing step's
 * own preloads: a weight of an earlier step that was preloaded (best-fit over a long window) and is
 * still live at the failing step can fragment it too. Such weights are re-planned without preload,
 * a few rounds, and finally the whole plan without preload, so preloading never needs a larger
 * budget than not preloading. Their steps are reported as fallback steps.
 */
export function attemptWithFallback(prep: Prepared, limit: number, k: number, preload: boolean): AttemptResult {
  const noPreload = new Uint8Array(prep.count)
  let r = attemptPlan(prep, limit, k, preload, noPreload)
  for (let round = 0; preload && !r.ok && round < blameRounds; round++) {
    const fresh = r.blame.filter((w) => noPreload[w] === 0)
    if (fresh.length === 0) break
    for (const w of fresh) noPreload[w] = 1
    r = attemptPlan(prep, limit, k, preload, noPreload)
  }
  if (preload && !r.ok) {
    const plain = attemptPlan(prep, limit, k, false, noPreload)
    if (plain.ok) {
      r = plain
      noPreload.fill(1)
    }
  }
  if (!r.ok) return r
  const steps = new Set(r.attempt.fallbackSteps)
  noPreload.forEach((x, w) => x === 1 && prep.kind[w] === kindWeight && r.attempt.pinned[w] === 0 && steps.add(prep.first[w]!))
  return { ok: true, attempt: { ...r.attempt, fallbackSteps: [...steps].sort((a, b) => a - b) } }
}
