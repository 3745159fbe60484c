// SPDX-License-Identifier: Apache-2.0
// IO planning (STI seed section 5.4.3): the bitwidth of every shard of the sub-model that is not preloaded.
//
// Preloaded shards stay at preloadBits. The others:
//   pass 1: one uniform bitwidth, the highest whose plan keeps every AIB >= 0 (bitwidths are tried
//           from the highest down, so sizes that are not monotone in the bitwidth cannot stop the
//           search early; with monotone sizes this equals the seed's "go up while valid").
//           Compute planning admitted the sub-model only if the lowest bitwidth is valid.
//   pass 2: shards in importance order (the ranking restricted to the sub-model's loaded shards,
//           then any shards the ranking leaves out, in layer order)
//           are each raised to the highest bitwidth that keeps every AIB >= 0, and the ranking is
//           walked again until a walk raises nothing.
// Does one walk suffice? When every shard's size is non-decreasing in the bitwidth (FPQ1 blobs and
// fp32 rows), yes: raises only add debits, so the AIBs only shrink during the walk, and whether a
// raise fits depends only on the AIBs of its layer and those above. A shard that could not go higher
// when visited cannot later; the second walk then raises nothing and only confirms. With a size
// table that shrinks at a higher bitwidth a raise can free budget, and a later walk may raise a
// shard an earlier one could not (the unit tests build such a table). Every raise increases some
// shard's bitwidth index, so the walks end after at most (shards x bitwidths) raises.
// A raise is tested by recomputing its layer's debit with the same formula as the ledger (not by
// adding a difference), so the final AIBs are bit-identical to a fresh computation of the plan.
// With the dev set's measured accuracies (profile.ts accuracyRule), beyond the seed: pass 1 stays at
// the lowest bitwidth when the model measured no more accurate at the highest than at the lowest,
// and pass 2 skips shards whose own raise measured no gain. The seed assumes more bits are never
// worse; on a model that loses nothing to the lowest bitwidth, reading more bits only spends IO
// (and, measured on the dev set, can even cost an email or two).
import { accumulatedBudgets, allNonNegative, isValid, layerDebit, ledgerOf, type BudgetRule } from './aib.js'
import type { SubModel } from './compute-plan.js'
import { uniformLayout, type Layout } from './layout.js'
import type { AccuracyRule, Model, Resolved } from './profile.js'

export interface IoPlan {
  readonly layout: Layout
  /** Pass 1's bitwidth index (the highest when no shard is loaded). */
  readonly uniformBi: number
  /** Walks over the ranking pass 2 made (the last raised nothing). */
  readonly walks: number
}

function uniformPass(model: Model, sub: SubModel, r: Resolved, rule: BudgetRule, raiseUniform: boolean): number {
  for (let b = raiseUniform ? model.bitwidths.length - 1 : 0; b >= 0; b--) {
    if (isValid(model, uniformLayout(sub.depth, sub.width, sub.preloaded, r.preloadBi, b), r.targetMs, rule)) return b
  }
  /* c8 ignore next 2 */
  throw new Error('IO planning: compute planning admitted a sub-model whose lowest-bitwidth plan is invalid')
}

/** Raises shards in `order` (flat layer-major indices of loaded shards) until a walk raises nothing. */
function raisePass(model: Model, layout: Layout, order: readonly number[], targetMs: number, rule: BudgetRule): number {
  const { startMs, computeMs, debits } = ledgerOf(model, layout, targetMs)
  const top = model.bitwidths.length - 1
  let walks = 0
  for (let raised = true; raised; ) {
    raised = false
    walks++
    for (const i of order) {
      const k = Math.floor(i / layout.width)
      const [from, saved] = [layout.bi[i]!, debits[k]!]
      for (let b = top; b > from; b--) {
        layout.bi[i] = b
        debits[k] = layerDebit(model, layout, k)
        if (allNonNegative(rule(startMs, computeMs, debits))) break
        ;[layout.bi[i], debits[k]] = [from, saved]
      }
      if (layout.bi[i] !== from) raised = true
    }
  }
  return walks
}

/**
 * Bitwidths for the sub-model: pass 1 then pass 2. `ranking` holds flat full-model indices
 * (layer * M + shard) in visiting order (profile.ts rankingOf); `accuracy` limits both passes to
 * raises the dev set measured a gain for (default: every raise). `chosenBi`: pass 1's answer is
 * already known (accuracy-plan.ts chose it), so only pass 2 runs.
 */
export function planIO(
  model: Model,
  ranking: readonly number[],
  sub: SubModel,
  r: Resolved,
  rule: BudgetRule = accumulatedBudgets,
  accuracy: AccuracyRule = { uniform: true, raise: () => true },
  chosenBi?: number,
): IoPlan {
  const uniformBi = chosenBi ?? uniformPass(model, sub, r, rule, accuracy.uniform)
  const layout = uniformLayout(sub.depth, sub.width, sub.preloaded, r.preloadBi, uniformBi)
  const M = model.shardsPerLayer
  const order: number[] = []
  for (const flat of ranking) {
    const [layer, shard] = [Math.floor(flat / M), flat % M]
    const i = layer * sub.width + shard
    if (layer < sub.depth && shard < sub.width && !layout.preloaded[i] && accuracy.raise(flat)) order.push(i)
  }
  return { layout, uniformBi, walks: raisePass(model, layout, order, r.targetMs, rule) }
}
