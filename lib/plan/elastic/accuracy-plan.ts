// SPDX-License-Identifier: Apache-2.0
// Planning by measured accuracy (beyond the seed): the sub-model and uniform bitwidth that measured
// most accurate on the dev set among those whose pipeline meets T.
//
// The seed's compute planning takes the largest n x m that fits T and IO planning then raises bits
// as far as the budgets allow, assuming accuracy grows with depth, width and bits. A DynaBERT-style
// model's accuracy table says how far that holds (the spam fixture: 1 x 2 beats 1 x 3, 6 x 6 equals
// 6 x 8, 2 bits equals fp32 on the full model but not on every sub-model). Given the table
// accuracy[depth - 1][width - 1][bi] (every shard of the sub-model at bitwidths[bi]; measured by
// profileSubModels in lib/prepare/shard-importance.ts), every (n, m, b) is a candidate:
//   layout  the first shards in layer order that fit in P preloaded, the rest loaded, all at b (or the
//           preloaded ones at an explicit preloadBits);
//   valid   every AIB >= 0 at T (aib.ts), as for the seed's plans.
// The answer maximises the measured accuracy; ties go to the larger sub-model (then the deeper, as
// compute planning breaks them), then to the lower bitwidth (fewer bytes read, more slack).
//
// Why it is never less accurate than a baseline on the same profile: StdPL-b's plan (n, m, every
// shard at b, no preload, valid AIBs) is the candidate (n, m, b) with P = 0, and a larger P only
// preloads a prefix at b, which removes IO (so it stays valid); Load&Exec's plan is StdPL-fp32's
// layout under a stricter schedule. So each baseline's (n, m, b) is a candidate, and the choice
// measured at least as accurate. (IO planning's pass 2 may then raise single shards whose own raise
// measured a gain; the table does not cover those mixed plans.)
// Feasibility is monotone in T and P as in compute-plan.ts, so the accuracy of the choice is too.
import { LatencyTargetError } from '../../errors.js'
import { accumulatedBudgets, isValid, type BudgetRule } from './aib.js'
import { largerSubModel, minimumPreload, minimumTarget, preloadCount, type SubModel } from './compute-plan.js'
import { uniformLayout } from './layout.js'
import type { Model, Resolved } from './profile.js'

/** Dev accuracy of (depth, width) with every shard at bitwidth index bi. */
export type SubModelAccuracy = (depth: number, width: number, bi: number) => number

export interface AccuracyChoice extends SubModel {
  /** Bitwidth index of the loaded shards. */
  readonly bi: number
  /** Bitwidth index of the preloaded shards (bi unless preloadBits was given). */
  readonly preloadBi: number
}

/**
 * Whether candidate a (accuracy accA) is preferred to b (accB): more accurate; at equal accuracy the
 * larger sub-model (more shards, then deeper); for the same sub-model the lower bitwidth index.
 */
export function morePreferred(a: { depth: number; width: number; bi: number }, accA: number, b: { depth: number; width: number; bi: number }, accB: number): boolean {
  if (accA !== accB) return accA > accB
  if (a.depth === b.depth && a.width === b.width) return a.bi < b.bi
  return largerSubModel(a, b)
}

/**
 * The most accurate valid (depth, width, bitwidth); LatencyTargetError when none meets T. With
 * `explicitPreloadBi` the preloaded shards keep that bitwidth, otherwise they take the candidate's.
 * `r.preloadBi` should then be the lowest bitwidth (the minimum target in the error assumes it).
 */
export function mostAccuratePlan(
  model: Model,
  accuracyOf: SubModelAccuracy,
  r: Resolved,
  explicitPreloadBi: boolean,
  rule: BudgetRule = accumulatedBudgets,
): AccuracyChoice {
  let best: AccuracyChoice | undefined
  let bestAccuracy = -Infinity
  for (let depth = 1; depth <= model.layers; depth++) {
    for (let width = 1; width <= model.shardsPerLayer; width++) {
      for (let bi = 0; bi < model.bitwidths.length; bi++) {
        const a = accuracyOf(depth, width, bi)
        if (best !== undefined && !morePreferred({ depth, width, bi }, a, best, bestAccuracy)) continue
        const preloadBi = explicitPreloadBi ? r.preloadBi : bi
        const preloaded = preloadCount(model, depth, width, r.preloadBytes, preloadBi)
        if (!isValid(model, uniformLayout(depth, width, preloaded, preloadBi, bi), r.targetMs, rule)) continue
        best = { depth, width, preloaded, bi, preloadBi }
        bestAccuracy = a
      }
    }
  }
  if (best === undefined) {
    throw new LatencyTargetError('the elastic pipeline', r.targetMs, minimumTarget(model, r, rule), minimumPreload(model, r, rule))
  }
  return best
}
