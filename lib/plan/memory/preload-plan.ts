// SPDX-License-Identifier: Apache-2.0
// Preload-aware static memory planning: where every tensor lives in one arena and when each weight may load.
//
// Model. A program runs as compute steps 0..S-1 on one compute queue, in order. Weights come from
// the package file through a second, sequential load queue, so a weight can be read while earlier
// steps compute -- if memory for it is free early enough. Every tensor has a kind, a size and an
// inclusive lifetime [first, last] in steps:
//   - weight: read by steps first..last; its load may begin at any allocStep in [0, first] and its
//     bytes are occupied from allocStep to last. Offsets and sizes are multiples of 4096 (O_DIRECT
//     reads of 4096-padded blobs).
//   - activation: written and read by compute; graph inputs have first = -1 (copied in before step
//     0), graph outputs last = S (copied out after the last step).
//   - intermediate: an op's workspace, live during its one step.
// A plan gives each tensor an offset and an allocStep such that two tensors whose occupied step
// ranges intersect never share a byte, and everything fits in [0, budget).
//
// Algorithm (FlexNN, "preload-aware memory planning", seed steps 1-4, plus pinning):
//   0. Pin: weights that fit stay resident across runs at the top of the arena. We pin the weights
//      of the leading k steps (early layers have no compute to hide their loads behind), with the
//      largest k for which the rest still plans, found by a galloping binary search over full plans.
//      A cheap lower bound (pinned bytes + live bytes of the rest) rejects hopeless k without planning.
//      Greedy planning is not monotone in k, so this finds a good k, not always the largest. With a
//      device profile the runtime instead compares prefixes and other step sets by simulating
//      each plan (pinPrefixPlanner here, choosePins in lib/plan/budget/choose-pins.ts).
//   1. Activations first, by first step: each goes to the lowest free address from the bottom or
//      the highest from the top, whichever reaches less far into the middle (ties: bottom), so the
//      middle of the arena stays one contiguous block for weights and workspaces.
//   2. Per step, its weights: the earliest allocStep t in [0, first] such that some gap of the
//      weight's size is free over [t, last] (widening the window only adds busy bytes, so we scan
//      down from first and stop at the first t that does not fit), placed best-fit in that window.
//   3. Then the step's intermediates, best-fit.
//   4. If (3) fails, greedy preloading fragmented the step: undo it and place its weights with
//      allocStep = first, then the intermediates again. If that fails too, we go beyond the seed:
//      weights of earlier steps that were preloaded and are still live at the failing step lose
//      their preload and the plan is redone (a few rounds), and last the whole plan without
//      preload, so preloading never needs a larger budget than not preloading. Only then is the
//      budget too small (PlanInfeasibleError names the step and the bytes live at it).
// Finally the post-processing the seed's online execution needs (type-allocator.ts): the
// type-based static allocator's (kind, ordinal) -> offset order, and the dependency
// comp(i) < load(j) for weights whose bytes reuse those of tensors freed by step i.
//
// The arena is capped at the padded total of all tensors (when the budget is larger), so a generous
// budget does not push top-placed tensors to its end. Sizes exclude the FLEXPIPE_OVERREAD pad the
// runtime keeps after the arena. Pure and deterministic: the same inputs give the same plan.
import { ArgumentError, PlanInfeasibleError } from '../../errors.js'
import { alignDown, alignUp } from '../../align.js'
import { attemptPlan, attemptWithFallback, bytesByStep, pinnedBytesByK, type AttemptResult } from './preload-place.js'
import { kindWeight, prepare, weightAlignment, type Prepared } from './preload-problem.js'
import type { PreloadOptions, PreloadPlan, PreloadProblem } from './preload-types.js'
import { typeBasedAllocation } from './type-allocator.js'

export { PlanInfeasibleError } from '../../errors.js'
export { planOnDemandFirstFit } from './on-demand-plan.js'
export type { Placement, PlanTensor, PreloadOptions, PreloadPlan, PreloadProblem, TensorKind } from './preload-types.js'

/** Cheap necessary condition for pinning the leading k steps: pinned bytes plus what must be live beside them. */
function pinLowerBound(prep: Prepared, limit: number): (k: number) => boolean {
  const S = prep.steps
  const pinned = pinnedBytesByK(prep)
  // Live bytes without weights, and the weights first used at each step (never pinned when step >= k).
  const others = Float64Array.from(prep.live)
  for (let i = 0; i < prep.count; i++) {
    if (prep.kind[i] !== kindWeight) continue
    for (let s = prep.first[i]!; s <= prep.last[i]!; s++) others[s + 1] = others[s + 1]! - prep.size[i]!
  }
  const before = new Float64Array(S + 3) // before[k + 1] = max over steps < k of others
  for (let s = -1; s <= S; s++) before[s + 2] = Math.max(before[s + 1]!, others[s + 1]!)
  const after = new Float64Array(S + 3) // after[k + 1] = max over steps >= k of others + weights starting there
  for (let s = S; s >= -1; s--) {
    const starting = s >= 0 && s < S ? pinned[s + 1]! - pinned[s]! : 0
    after[s + 1] = Math.max(after[s + 2]!, others[s + 1]! + starting)
  }
  const top = alignDown(limit, weightAlignment)
  return (k) => pinned[k]! + Math.max(before[k + 1]!, after[k + 1]!) <= (pinned[k] === 0 ? limit : top)
}

/**
 * Plans inside [0, limit), pinning the weights of as many leading steps as still plan (step 0).
 * The search starts at the largest k the lower bound allows and gallops down, then bisects: the
 * answer is usually close to that bound, and attempts with large k are the cheap ones (few loaded
 * weights, short preload windows). k = 0 is tried only when nothing larger plans.
 */
function planWithin(prep: Prepared, limit: number, pin: boolean, preload: boolean, maxPinSteps: number): AttemptResult {
  // Probes with k > 0 skip the wider fallback: a failing probe then costs one attempt, not five.
  const attempt = (k: number): AttemptResult =>
    k === 0 ? attemptWithFallback(prep, limit, 0, preload) : attemptPlan(prep, limit, k, preload, new Uint8Array(prep.count))
  if (!pin || prep.steps === 0) return attempt(0)
  const bound = pinLowerBound(prep, limit)
  let hi = Math.min(prep.steps, Math.max(0, Math.floor(maxPinSteps))) + 1 // smallest k known not to plan (or not allowed)
  while (hi > 1 && !bound(hi - 1)) hi--
  let best: AttemptResult | undefined
  let lo = 0
  for (let k = hi - 1, stride = 1; k > 0 && best === undefined; k = Math.max(0, k - stride), stride *= 2) {
    const r = attempt(k)
    if (r.ok) [best, lo] = [r, k]
    else hi = k
  }
  if (best === undefined) return attempt(0)
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    const r = bound(mid) ? attempt(mid) : undefined
    if (r?.ok) [best, lo] = [r, mid]
    else hi = mid
  }
  return best
}

/**
 * The plan for a budget: first inside the capped arena, then (if that fails) the whole budget. A cap on
 * the pinned prefix (maxPinSteps) that leaves no plan is lifted: pinning more can be what makes a tight
 * budget plan (pinned weights sit together at the top and leave no holes), and the cap is a latency
 * preference, never a reason to fail.
 */
function planForBudget(prep: Prepared, budget: number, pin: boolean, preload: boolean, maxPinSteps = Infinity): AttemptResult {
  const within = (limit: number): AttemptResult => {
    const r = planWithin(prep, limit, pin, preload, maxPinSteps)
    return r.ok || !pin || !(maxPinSteps < prep.steps) ? r : planWithin(prep, limit, pin, preload, Infinity)
  }
  const cap = alignUp(prep.total, weightAlignment)
  if (cap < budget) {
    const capped = within(cap)
    if (capped.ok) return capped
  }
  return within(budget)
}

function checkBudget(budget: number): void {
  if (!Number.isSafeInteger(budget) || budget < 0) throw new ArgumentError(`budget: expected integer >= 0, got ${budget}`)
}

/** A problem prepared once, planned with the pin sets a caller chooses between (choose-pins.ts). */
export interface PinPrefixPlanner {
  readonly steps: number
  /** The plan with exactly the weights of the leading k steps pinned, or undefined if it does not fit. */
  withPrefix(k: number): PreloadPlan | undefined
  /** The plan with exactly the weights first used by `steps` pinned, or undefined if it does not fit. */
  withSteps(steps: readonly number[]): PreloadPlan | undefined
  /** stepBytes[s]: bytes (4096-padded) of the weights first used by step s. */
  readonly stepBytes: Float64Array
  /** planPreload's own plan (the longest prefix that plans, up to maxPinSteps); throws PlanInfeasibleError. */
  largest(): PreloadPlan
}

/**
 * The pinned sets of one problem and budget, sharing one preparation: withPrefix(k) is one placement
 * attempt (after a cheap bound rules out prefixes too large to fit), inside the same capped arena as
 * planPreload, so a caller can compare plans by its own measure (choose-pins.ts simulates the
 * pipeline). withSteps(steps) pins the weights of any set of steps instead (choose-pins.ts tries
 * suffixes).
 */
export function pinPrefixPlanner(problem: PreloadProblem, options: PreloadOptions): PinPrefixPlanner {
  checkBudget(options.budget)
  const prep = prepare(problem, options.alignment)
  const preload = options.preload ?? true
  const cap = alignUp(prep.total, weightAlignment)
  const limits = cap < options.budget ? [cap, options.budget] : [options.budget]
  const bounds = limits.map((limit) => pinLowerBound(prep, limit))
  const stepBytes = bytesByStep(prep)
  return {
    steps: prep.steps,
    stepBytes,
    withSteps(steps: readonly number[]): PreloadPlan | undefined {
      const set = [...new Set(steps)].filter((s) => Number.isInteger(s) && s >= 0 && s < prep.steps)
      if (set.length === 0) return this.withPrefix(0)
      const bytes = set.reduce((sum, s) => sum + stepBytes[s]!, 0)
      for (const limit of limits) {
        if (bytes > limit) continue
        const r = attemptPlan(prep, limit, set, preload, new Uint8Array(prep.count))
        if (r.ok) return typeBasedAllocation(prep, r.attempt)
      }
      return undefined
    },
    withPrefix(k: number): PreloadPlan | undefined {
      k = Math.max(0, Math.min(prep.steps, Math.floor(k)))
      for (let i = 0; i < limits.length; i++) {
        if (k > 0 && !bounds[i]!(k)) continue
        const r = k === 0 ? attemptWithFallback(prep, limits[i]!, 0, preload) : attemptPlan(prep, limits[i]!, k, preload, new Uint8Array(prep.count))
        if (r.ok) return typeBasedAllocation(prep, r.attempt)
      }
      return undefined
    },
    largest(): PreloadPlan {
      const r = planForBudget(prep, options.budget, options.pin ?? true, preload, options.maxPinSteps ?? Infinity)
      if (!r.ok) throw new PlanInfeasibleError(r.step, prep.live[r.step + 1]!, options.budget)
      return typeBasedAllocation(prep, r.attempt)
    },
  }
}

/** Plans every tensor of `problem` inside `options.budget` bytes; throws PlanInfeasibleError if it does not fit. */
export function planPreload(problem: PreloadProblem, options: PreloadOptions): PreloadPlan {
  checkBudget(options.budget)
  const prep = prepare(problem, options.alignment)
  const r = planForBudget(prep, options.budget, options.pin ?? true, options.preload ?? true, options.maxPinSteps ?? Infinity)
  if (!r.ok) throw new PlanInfeasibleError(r.step, prep.live[r.step + 1]!, options.budget)
  return typeBasedAllocation(prep, r.attempt)
}

/**
 * The smallest budget (a multiple of 4096) for which planPreload succeeds. Starts at the live-bytes
 * lower bound (the busiest step without preload), gallops up to a budget that plans, then bisects.
 * The greedy planner is not guaranteed monotone in the budget; the search keeps the invariant that
 * the answer was planned and answer - 4096 failed (or is below the lower bound).
 */
export function minimumArenaBytes(problem: PreloadProblem, options: Omit<PreloadOptions, 'budget'> = {}): number {
  const prep = prepare(problem, options.alignment)
  const plans = (b: number): boolean => planForBudget(prep, b, options.pin ?? true, options.preload ?? true).ok
  let hi = alignUp(Math.max(0, ...prep.live), weightAlignment)
  let lo = hi - weightAlignment
  for (let stride = weightAlignment; !plans(hi); stride *= 2) {
    lo = hi
    hi += stride
  }
  while (hi - lo > weightAlignment) {
    const mid = lo + alignDown((hi - lo) / 2, weightAlignment)
    if (plans(mid)) hi = mid
    else lo = mid
  }
  return hi
}
