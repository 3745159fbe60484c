// SPDX-License-Identifier: Apache-2.0
// planElastic: the STI planner -- compute planning (compute-plan.ts), then IO planning (io-plan.ts).
//
// Given the profile, the shard importance ranking, a target T and a preload buffer P, it returns the
// largest (then deepest) sub-model whose pipeline meets T with every shard that is not preloaded at
// its lowest bitwidth, with bitwidths raised as far as the accumulated IO budgets allow: uniformly
// first, then shard by shard in importance order. Every plan satisfies simulatePipeline <= T
// (aib.ts proves why the AIB test guarantees it). Flexpipe without a preload buffer ("Ours-0MB") is
// planElastic with preloadBytes 0. Pure and deterministic.
import { accumulatedBudgets, type BudgetRule } from './aib.js'
import { computePlan, minimumTarget, type SubModel } from './compute-plan.js'
import { planIO } from './io-plan.js'
import { buildPlan } from './plan-build.js'
import { modelOf, rankingOf, resolveOptions } from './profile.js'
import type { ElasticOptions, ElasticPlan, ElasticProfile, ShardRef } from './types.js'

export type { SubModel } from './compute-plan.js'

/**
 * Plans the elastic pipeline; LatencyTargetError when no sub-model meets targetMs. `importance` ranks
 * shards most important first; shards it leaves out are upgraded after the ranked ones, in layer order.
 */
export function planElastic(profile: ElasticProfile, importance: readonly ShardRef[], options: ElasticOptions): ElasticPlan {
  return planElasticWith(profile, importance, options, accumulatedBudgets)
}

/** planElastic with the AIB rule as a parameter (the tests' mutation check); not part of the public API. */
export function planElasticWith(
  profile: ElasticProfile,
  importance: readonly ShardRef[],
  options: ElasticOptions,
  rule: BudgetRule,
): ElasticPlan {
  const model = modelOf(profile)
  const r = resolveOptions(model, options)
  const ranking = rankingOf(model, importance)
  const io = planIO(model, ranking, computePlan(model, r, rule), r, rule)
  return buildPlan(model, io.layout, { planner: 'flexpipe', schedule: 'pipelined', targetMs: r.targetMs, uniformBi: io.uniformBi })
}

/** Compute planning alone: the sub-model planElastic would execute and how many of its shards are preloaded. */
export function planCompute(profile: ElasticProfile, options: ElasticOptions): SubModel {
  const model = modelOf(profile)
  return computePlan(model, resolveOptions(model, options))
}

/** The smallest targetMs for which planElastic succeeds with this preload buffer. */
export function minimumTargetMs(profile: ElasticProfile, options: Omit<ElasticOptions, 'targetMs'> = {}): number {
  const model = modelOf(profile)
  return minimumTarget(model, resolveOptions(model, { ...options, targetMs: 0 }))
}
