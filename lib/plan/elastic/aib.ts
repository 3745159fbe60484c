// SPDX-License-Identifier: Apache-2.0
// Accumulated IO budgets (AIBs, STI seed section 5.4.2): the validity test of an elastic plan.
//
// Time 0 is the inference start; a depth-n, width-m plan must finish by T. With c = layerComputeMs[m]
// and F = fixedMs:
//   slack   = T - F - n*c                      idle time the pipeline can afford
//   bonus   = sum of readMsPerByte * bytes over the preloaded shards     (the seed's "bonus IO";
//             no readMsPerJob: a layer with only preloaded shards is not debited one either)
//   AIB(0)  = bonus + F + slack,  AIB(k) = AIB(k-1) + c
//   debit(j) = readMsPerByte * (bytes of every shard of layer j, preloaded ones included)
//              + readMsPerJob if layer j has a shard that is not preloaded
// and each debit(j) is taken from AIB(j), AIB(j+1), ... A plan is valid iff slack >= 0 (compute
// planning guarantees it; the AIBs alone do not, e.g. when everything is preloaded) and every AIB >= 0.
//
// Why this is the right test. Let L_k be the time IO job k ends: jobs run back to back from time 0,
// so L_k = sum_{j<=k} (IO of layer j's loaded shards, + readMsPerJob if it has any). The bonus and
// the preloaded debits cancel except for preloaded shards above layer k:
//   AIB(k) = F + slack + k*c - L_k + E_k,   E_k = readMsPerByte * preloaded bytes in layers > k.
// The preload set is a prefix in layer order, so E_k > 0 only when layers 0..k are all preloaded,
// and then L_k = 0 and AIB(k) >= 0 anyway. Hence every AIB >= 0  <=>  L_k <= F + slack + k*c for all k.
// Layer k computes from S_k = max(S_{k-1} + c, L_k) with S_0 = max(F, L_0), so with slack >= 0, by
// induction S_k <= F + slack + k*c: no layer starts later than the slack allows (compute stalls
// total at most the slack), and the makespan S_{n-1} + c <= F + slack + n*c = T. Conversely
// S_{n-1} + c >= max(F + n*c, L_k + (n-k)*c), so a plan whose modelled makespan is <= T is valid:
// the test is exact, not only safe (which is why the StdPL baseline, planned by simulation, passes it).
// The AIBs are computed in floating point exactly as written above, with no tolerance; the minimum
// target a planner reports is nudged up until this very computation accepts it.
import { bytesAt, modelOf, type Model } from './profile.js'
import { layoutOfPlan, type Layout } from './layout.js'
import type { AibCheck, ElasticProfile, PlanShape } from './types.js'

/**
 * AIB(k) = startMs + k * computeMs - sum_{j<=k} debits[j]. A parameter of the planners only so
 * that the tests can plant a broken rule and see the properties fail.
 */
export type BudgetRule = (startMs: number, computeMs: number, debits: ArrayLike<number>) => Float64Array

export const accumulatedBudgets: BudgetRule = (startMs, computeMs, debits) => {
  const aib = new Float64Array(debits.length)
  let budget = startMs
  for (let k = 0; k < debits.length; k++) {
    if (k > 0) budget += computeMs
    budget -= debits[k]!
    aib[k] = budget
  }
  return aib
}

export const allNonNegative = (aib: ArrayLike<number>): boolean => {
  for (let k = 0; k < aib.length; k++) if (!(aib[k]! >= 0)) return false
  return true
}

/** The inputs of the budget rule for a layout under target T. */
export interface Ledger {
  readonly startMs: number
  readonly computeMs: number
  readonly slackMs: number
  /** debit(j) per layer; the IO planner updates it in place as it raises bitwidths. */
  readonly debits: Float64Array
}

/** debit(k) of a layout's layer k; the one formula both the ledger and the IO planner's updates use. */
export function layerDebit(model: Model, layout: Layout, k: number): number {
  let ms = 0
  let loads = false
  for (let i = k * layout.width; i < (k + 1) * layout.width; i++) {
    ms += model.readMsPerByte * bytesAt(model, k, layout.shard[i]!, layout.bi[i]!)
    if (!layout.preloaded[i]) loads = true
  }
  return loads ? ms + model.readMsPerJob : ms
}

export function ledgerOf(model: Model, layout: Layout, targetMs: number): Ledger {
  const { depth, width } = layout
  const computeMs = model.computeMs[width]!
  const slackMs = targetMs - model.fixedMs - depth * computeMs
  const debits = new Float64Array(depth)
  let bonus = 0
  for (let k = 0; k < depth; k++) {
    debits[k] = layerDebit(model, layout, k)
    for (let i = k * width; i < (k + 1) * width; i++) {
      if (layout.preloaded[i]) bonus += model.readMsPerByte * bytesAt(model, k, layout.shard[i]!, layout.bi[i]!)
    }
  }
  return { startMs: bonus + model.fixedMs + slackMs, computeMs, slackMs, debits }
}

/** Valid iff the slack is >= 0 and every AIB is (the slack test matters only when nothing is loaded). */
export function isValid(model: Model, layout: Layout, targetMs: number, rule: BudgetRule = accumulatedBudgets): boolean {
  const l = ledgerOf(model, layout, targetMs)
  return l.slackMs >= 0 && allNonNegative(rule(l.startMs, l.computeMs, l.debits))
}

/**
 * The AIBs of a plan (or of a hand-made candidate: its target and shards suffice) under a profile.
 * Which shards are preloaded is taken from the plan; the exactness argument above assumes they are
 * a prefix in layer order, as every planner here makes them.
 */
export function checkAIB(profile: ElasticProfile, plan: PlanShape): AibCheck {
  const model = modelOf(profile)
  const l = ledgerOf(model, layoutOfPlan(model, plan), plan.targetMs)
  const aib = Array.from(accumulatedBudgets(l.startMs, l.computeMs, l.debits))
  return { valid: l.slackMs >= 0 && allNonNegative(aib), aib, slackMs: l.slackMs }
}
