// SPDX-License-Identifier: Apache-2.0
// planElastic: the STI planner -- compute planning (compute-plan.ts), then IO planning (io-plan.ts).
//
// Given the profile, the shard importance ranking, a target T and a preload buffer P, it returns the
// largest (then deepest) sub-model whose pipeline meets T with every shard that is not preloaded at
// its lowest bitwidth, with bitwidths raised as far as the accumulated IO budgets allow: uniformly
// first, then shard by shard in importance order (with the dev set's measured accuracies, only where
// they measured a gain: io-plan.ts). With the dev set's accuracy of every sub-model at every
// bitwidth, the most accurate sub-model and bitwidth that meet T instead (accuracy-plan.ts), then
// pass 2. Every plan satisfies simulatePipeline <= T
// (aib.ts proves why the AIB test guarantees it). Flexpipe without a preload buffer ("Ours-0MB") is
// planElastic with preloadBytes 0. Pure and deterministic.
import { mostAccuratePlan } from './accuracy-plan.js'
import { accumulatedBudgets, type BudgetRule } from './aib.js'
import { computePlan, minimumTarget, type SubModel } from './compute-plan.js'
import { planIO } from './io-plan.js'
import { buildPlan } from './plan-build.js'
import { accuracyRule, modelOf, rankingOf, resolveOptions } from './profile.js'
import type { ElasticOptions, ElasticPlan, ElasticProfile, RankedImportance, ShardRef } from './types.js'

export type { SubModel } from './compute-plan.js'

/**
 * Plans the elastic pipeline; LatencyTargetError when no sub-model meets targetMs. `importance` ranks
 * shards most important first (a bare ranking, or with the accuracies it was measured by); shards it
 * leaves out are upgraded after the ranked ones, in layer order.
 */
export function planElastic(profile: ElasticProfile, importance: readonly ShardRef[] | RankedImportance, options: ElasticOptions): ElasticPlan {
  return planElasticWith(profile, importance, options, accumulatedBudgets)
}

/** planElastic with the AIB rule as a parameter (the tests' mutation check); not part of the public API. */
export function planElasticWith(
  profile: ElasticProfile,
  importance: readonly ShardRef[] | RankedImportance,
  options: ElasticOptions,
  rule: BudgetRule,
): ElasticPlan {
  const model = modelOf(profile)
  const ranked = 'ranking' in importance ? importance : { ranking: importance }
  const accuracy = accuracyRule(model, ranked.accuracy)
  if (accuracy.subModels) {
    // The measured table decides sub-model and bitwidth (accuracy-plan.ts); preloaded shards take
    // the chosen bitwidth unless preloadBits is given.
    const explicit = options.preloadBits !== undefined
    const r = resolveOptions(model, explicit ? options : { ...options, preloadBits: model.bitwidths[0] })
    const choice = mostAccuratePlan(model, accuracy.subModels, r, explicit, rule)
    const io = planIO(model, rankingOf(model, ranked.ranking), choice, { ...r, preloadBi: choice.preloadBi }, rule, accuracy, choice.bi)
    return buildPlan(model, io.layout, { planner: 'flexpipe', schedule: 'pipelined', targetMs: r.targetMs, uniformBi: io.uniformBi })
  }
  // Bits that measured no gain are not spent in the preload buffer either: it holds shards at the
  // lowest bitwidth then (more of them), unless preloadBits says otherwise.
  const preloadBits = options.preloadBits ?? (accuracy.uniform ? undefined : model.bitwidths[0])
  const r = resolveOptions(model, preloadBits === undefined ? options : { ...options, preloadBits })
  const ranking = rankingOf(model, ranked.ranking)
  const io = planIO(model, ranking, computePlan(model, r, rule), r, rule, accuracy)
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
