// SPDX-License-Identifier: Apache-2.0
// What a budget plan will cost per inference, from the device profile: the load queue it implies, each
// op's measured compute time and each load's read time, and their pipelined makespan
// (lib/plan/budget/pipeline-sim.ts, which models the native gate the engine runs them with).
import { simulateGate, type PipelineTimes } from './pipeline-sim.js'
import type { PreloadPlan } from '../memory/preload-plan.js'
import type { LayerChoice } from './slicing.js'
import type { BudgetProgram } from './budget-program.js'
import type { PipelineSchedule } from './pipeline-edges.js'
import type { StepLayer } from './layer-options.js'

/** What the planner knows of the device (the package's profile). */
export interface PlanProfile {
  /** Milliseconds of layer i (index into layers) with `kernel`, when measured. */
  readonly ms: (layer: number, kernel: string) => number | undefined
  /** Weight read bandwidth, bytes per second (the throttle, when lower). */
  readonly bandwidth: number
}

/** Fixed cost of one load besides its bytes (queueing its first chunk), ms. */
export const loadOverheadMs = 0.02

/** The loads an inference issues under `plan`: the weights it does not pin, in the planned order. */
export function planSchedule(b: BudgetProgram, plan: PreloadPlan): PipelineSchedule & { readonly tensors: readonly number[] } {
  const tensors = plan.order.weight.filter((t) => !plan.placements[t]!.pinned)
  return {
    ops: b.ops,
    tensors,
    loads: tensors.map((t) => ({ step: b.problem.tensors[t]!.first, after: plan.loadAfter[t]!, bytes: b.loads[t]!.bytes })),
  }
}

/**
 * Each op's compute time from the profile: its layer's time with the chosen kernel, shared equally by
 * the ops of that node (a sliced layer runs as several); unmeasured ops count 0.
 */
export function opTimes(layers: readonly StepLayer[], profile: PlanProfile, b: BudgetProgram, choices: readonly LayerChoice[]): Float64Array {
  const layerOf = new Map(layers.map((l, i) => [l.step.node.name, i]))
  const opsOfNode = new Map<string, number>()
  for (const n of b.opNodes) opsOfNode.set(n, (opsOfNode.get(n) ?? 0) + 1)
  return Float64Array.from(b.opNodes, (n) => {
    const i = layerOf.get(n)
    const ms = i === undefined ? undefined : profile.ms(i, layers[i]!.options[choices[i]!.option]!.kernel)
    return (ms ?? 0) / (opsOfNode.get(n) ?? 1)
  })
}

/** Each load's read time (ms) at the profile's bandwidth. */
export function loadTimes(profile: PlanProfile, s: PipelineSchedule): Float64Array {
  const perMs = profile.bandwidth / 1e3
  return Float64Array.from(s.loads, (l) => (l.bytes ?? 0) / perMs + loadOverheadMs)
}

/** The modelled times of one inference under `plan` (ops from `ops`, loads at the profile's bandwidth). */
export function planTimes(profile: PlanProfile, b: BudgetProgram, plan: PreloadPlan, ops: Float64Array): PipelineTimes {
  const s = planSchedule(b, plan)
  return simulateGate(s, ops, loadTimes(profile, s))
}
