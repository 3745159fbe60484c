// SPDX-License-Identifier: Apache-2.0
// Restrictions and orders of the budget planner's kernel options per layer: the NCNN-Direct baseline,
// the passes that profile the lean kernels, and the order measured times give.
import type { BudgetModel } from './plan-budget.js'

/** The model with every convolution restricted to direct convolution (the NCNN-Direct baseline). */
export function directConvolutionOnly<M extends BudgetModel>(m: M): M {
  const layers = m.layers.map((l) => (l.step.node.opType !== 'Conv' ? l : { ...l, options: l.options.filter((o) => o.kernel === 'direct' || o.kernel === 'as-is') }))
  return { ...m, layers }
}

/**
 * The model with each Winograd layer restricted to its lean Winograd kernel (winograd63_lean /
 * winograd23_lean: profiling it; the other layers keep their options).
 */
export function leanWinogradOnly<M extends BudgetModel>(m: M): M {
  const layers = m.layers.map((l) => {
    const lean = l.options.filter((o) => o.kernel.startsWith('winograd') && o.kernel.endsWith('_lean'))
    return lean.length === 0 ? l : { ...l, options: lean }
  })
  return { ...m, layers }
}

/** The model with Winograd options (lean ones too) dropped where another kernel remains (profiling the other lean kernels). */
export function withoutWinograd<M extends BudgetModel>(m: M): M {
  const layers = m.layers.map((l) => {
    const lean = l.options.filter((o) => !o.kernel.startsWith('winograd'))
    return lean.length === 0 || lean.length === l.options.length ? l : { ...l, options: lean }
  })
  return { ...m, layers }
}

/** Orders each layer's kernel options by measured time (unmeasured ones keep their place after them). */
export function orderByProfile<M extends BudgetModel>(m: M): M {
  const p = m.profile
  if (p === undefined) return m
  const layers = m.layers.map((l, i) => {
    const keyed = l.options.map((o, k) => ({ o, k, ms: p.ms(i, o.kernel) ?? Infinity }))
    keyed.sort((a, b) => a.ms - b.ms || a.k - b.k)
    return { ...l, options: keyed.map((x) => x.o) }
  })
  return { ...m, layers }
}
