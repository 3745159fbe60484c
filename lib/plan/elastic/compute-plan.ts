// SPDX-License-Identifier: Apache-2.0
// Compute planning (STI seed section 5.3): the sub-model depth x width, and the preload set it implies.
//
// Every (n, m) in 1..N x 1..M is enumerated (at most a few hundred). A candidate is feasible when
// F + n * layerComputeMs[m] <= T and its lowest-fidelity plan -- every shard that is not preloaded at
// the lowest bitwidth -- has non-negative AIBs (aib.ts). When shard sizes grow with the bitwidth
// (FPQ1 blobs do: every term of their size grows with bits) no other plan of that sub-model is
// valid either. The IO planner starts from this plan, so it always finds one. (Size tables that
// shrink at a higher bitwidth are accepted, but only the lowest bitwidth decides feasibility.)
// The answer maximizes n * m (FLOPs), ties going to the deeper candidate (the seed: heads within a
// layer are redundant, so a layer is worth more than a head).
//
// Preload set: the first shards of the sub-model in layer order (layer 0's shards 0..m-1, then
// layer 1's ...) whose preloadBits versions fit in P bytes together; the first that does not fit
// ends it, so the set is always a prefix, which the AIB argument in aib.ts relies on.
//
// Feasibility is monotone in T (every AIB grows with T) and in P (a larger P preloads a superset,
// which only removes IO), so the chosen n * m, then n, never decreases as T or P grows.
// The minimum target: candidate (n, m)'s lowest-fidelity plan needs exactly its simulated makespan
// max(F + n*c, max_k L_k + (n-k)*c); it is nudged up by ulps until the floating-point AIB test accepts
// it, and the smallest over all candidates is reported (1 x 1 when compute grows with m).
import { LatencyTargetError } from '../../errors.js'
import { accumulatedBudgets, isValid, type BudgetRule } from './aib.js'
import { uniformLayout, type Layout } from './layout.js'
import { bytesAt, type Model, type Resolved } from './profile.js'
import { timelineOf } from './simulate.js'

export interface SubModel {
  readonly depth: number
  readonly width: number
  /** The first `preloaded` shards of the sub-model in layer order are in the preload buffer. */
  readonly preloaded: number
}

/** How many leading shards (layer order) fit in `preloadBytes` at bitwidth index `preloadBi`. */
export function preloadCount(model: Model, depth: number, width: number, preloadBytes: number, preloadBi: number): number {
  let used = 0
  for (let i = 0; i < depth * width; i++) {
    used += bytesAt(model, Math.floor(i / width), i % width, preloadBi)
    if (used > preloadBytes) return i
  }
  return depth * width
}

function lowestLayout(model: Model, depth: number, width: number, r: Resolved, preloaded?: number): Layout {
  const p = preloaded ?? preloadCount(model, depth, width, r.preloadBytes, r.preloadBi)
  return uniformLayout(depth, width, p, r.preloadBi, 0)
}

/** True when a is the better sub-model: more shards, or as many in more layers. */
export const largerSubModel = (a: { depth: number; width: number }, b: { depth: number; width: number }): boolean =>
  a.depth * a.width > b.depth * b.width || (a.depth * a.width === b.depth * b.width && a.depth > b.depth)

/** Enumerates (n, m) and keeps the best for which `fits` holds. */
export function bestSubModel(model: Model, fits: (depth: number, width: number) => boolean): { depth: number; width: number } | undefined {
  let best: { depth: number; width: number } | undefined
  for (let depth = 1; depth <= model.layers; depth++) {
    for (let width = 1; width <= model.shardsPerLayer; width++) {
      const c = { depth, width }
      if ((best === undefined || largerSubModel(c, best)) && fits(depth, width)) best = c
    }
  }
  return best
}

/**
 * The smallest target (up to a few ulps) at which `accepts` holds, starting from `estimate`, the exact-
 * arithmetic answer: rounding may put the floating-point test a few ulps away from it either way.
 */
export function nudgeUp(estimate: number, accepts: (targetMs: number) => boolean): number {
  let t = estimate
  for (let step = Math.max(Math.abs(t) * Number.EPSILON, Number.MIN_VALUE); !accepts(t); step *= 2) t += step
  return t
}

/** The smallest T for which the flexpipe planner finds some sub-model (with this P). */
export function minimumTarget(model: Model, r: Resolved, rule: BudgetRule = accumulatedBudgets): number {
  let min = Infinity
  for (let depth = 1; depth <= model.layers; depth++) {
    for (let width = 1; width <= model.shardsPerLayer; width++) {
      const layout = lowestLayout(model, depth, width, r)
      const estimate = timelineOf(model, layout, 'pipelined').totalMs
      if (estimate < min) min = Math.min(min, nudgeUp(estimate, (t) => isValid(model, layout, t, rule)))
    }
  }
  return min
}

/** The smallest preload buffer (bytes) with which T plans, or undefined when compute alone exceeds T. */
export function minimumPreload(model: Model, r: Resolved, rule: BudgetRule = accumulatedBudgets): number | undefined {
  let min: number | undefined
  for (let depth = 1; depth <= model.layers; depth++) {
    for (let width = 1; width <= model.shardsPerLayer; width++) {
      const valid = (p: number): boolean => isValid(model, lowestLayout(model, depth, width, r, p), r.targetMs, rule)
      if (!valid(depth * width)) continue
      let [lo, hi] = [-1, depth * width] // valid(hi); lo is invalid or -1
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1
        if (valid(mid)) hi = mid
        else lo = mid
      }
      let bytes = 0
      for (let i = 0; i < hi; i++) bytes += bytesAt(model, Math.floor(i / width), i % width, r.preloadBi)
      if (min === undefined || bytes < min) min = bytes
    }
  }
  return min
}

/** The largest feasible sub-model under r.targetMs; LatencyTargetError when there is none. */
export function computePlan(model: Model, r: Resolved, rule: BudgetRule = accumulatedBudgets): SubModel {
  const best = bestSubModel(model, (depth, width) => isValid(model, lowestLayout(model, depth, width, r), r.targetMs, rule))
  if (best === undefined) {
    throw new LatencyTargetError('the elastic pipeline', r.targetMs, minimumTarget(model, r, rule), minimumPreload(model, r, rule))
  }
  return { ...best, preloaded: preloadCount(model, best.depth, best.width, r.preloadBytes, r.preloadBi) }
}
