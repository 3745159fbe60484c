// SPDX-License-Identifier: Apache-2.0
// The seed's baselines (section 7.1), planned over the same profile and returned as ElasticPlans.
//
//   Load&Exec       every shard of the sub-model at the highest bitwidth (fp32), all IO first, then
//                   the fixed part and the layers: IO + F + n*c <= T. (The seed says "closest to T";
//                   we never exceed T.)
//   StdPL-X         the layerwise pipeline of simulate.ts, every shard at X bits, no preload buffer.
//   PreloadModel-X  the whole N x M model resident at X bits, no IO: F + n*c <= T.
// Each picks the largest n * m, ties going deeper (as compute planning does), whose modelled
// makespan is <= T. Also required is a valid AIB ledger, which the makespan test already implies
// (aib.ts; for Load&Exec because all of its IO ends before anything computes), so every planner's
// plans satisfy the same invariants. The minimum target is the smallest makespan over candidates,
// nudged by ulps if the floating-point tests disagree with it.
import { LatencyTargetError } from '../../errors.js'
import { isValid } from './aib.js'
import { bestSubModel, nudgeUp } from './compute-plan.js'
import { uniformLayout, type Layout } from './layout.js'
import { bitsIndex, checkTarget, modelOf, type Model } from './profile.js'
import { buildPlan, wholeModel } from './plan-build.js'
import { timelineOf } from './simulate.js'
import type { BaselineOptions, ElasticPlan, ElasticPlanner, ElasticProfile, ElasticSchedule } from './types.js'

interface Baseline {
  readonly what: string
  readonly planner: ElasticPlanner
  readonly schedule: ElasticSchedule
  readonly bi: number
  readonly layout: (depth: number, width: number) => Layout
  readonly preloadAll?: boolean
}

function planBaseline(model: Model, targetMs: number, b: Baseline): ElasticPlan {
  checkTarget(targetMs)
  const fits = (layout: Layout, t: number): boolean => timelineOf(model, layout, b.schedule).totalMs <= t && isValid(model, layout, t)
  const best = bestSubModel(model, (depth, width) => fits(b.layout(depth, width), targetMs))
  if (best === undefined) {
    let min = Infinity
    for (let depth = 1; depth <= model.layers; depth++) {
      for (let width = 1; width <= model.shardsPerLayer; width++) {
        const layout = b.layout(depth, width)
        min = Math.min(min, nudgeUp(timelineOf(model, layout, b.schedule).totalMs, (t) => fits(layout, t)))
      }
    }
    throw new LatencyTargetError(b.what, targetMs, min)
  }
  const layout = b.layout(best.depth, best.width)
  const preload = b.preloadAll ? wholeModel(model, b.bi) : undefined
  return buildPlan(model, layout, { planner: b.planner, schedule: b.schedule, targetMs, uniformBi: b.bi, ...(preload ? { preload } : {}) })
}

/** Load&Exec: the whole sub-model at the highest bitwidth is read, then executed. */
export function planLoadAndExec(profile: ElasticProfile, options: { readonly targetMs: number }): ElasticPlan {
  const model = modelOf(profile)
  const bi = model.bitwidths.length - 1
  const what = `the Load&Exec baseline (${model.bitwidths[bi]} bits)`
  const layout = (depth: number, width: number): Layout => uniformLayout(depth, width, 0, bi, bi)
  return planBaseline(model, options.targetMs, { what, planner: 'load-and-exec', schedule: 'load-then-execute', bi, layout })
}

/** StdPL-X: a layerwise IO/compute pipeline with every shard at options.bits. */
export function planStdPL(profile: ElasticProfile, options: BaselineOptions): ElasticPlan {
  const model = modelOf(profile)
  const bi = bitsIndex(model, options.bits, 'bits')
  const layout = (depth: number, width: number): Layout => uniformLayout(depth, width, 0, bi, bi)
  const what = `the StdPL-${options.bits} baseline`
  return planBaseline(model, options.targetMs, { what, planner: 'stdpl', schedule: 'pipelined', bi, layout })
}

/** PreloadModel-X: the whole model resident at options.bits; only compute counts. */
export function planPreloadModel(profile: ElasticProfile, options: BaselineOptions): ElasticPlan {
  const model = modelOf(profile)
  const bi = bitsIndex(model, options.bits, 'bits')
  const layout = (depth: number, width: number): Layout => uniformLayout(depth, width, depth * width, bi, bi)
  const what = `the PreloadModel-${options.bits} baseline`
  return planBaseline(model, options.targetMs, { what, planner: 'preload-model', schedule: 'pipelined', bi, layout, preloadAll: true })
}
