// SPDX-License-Identifier: Apache-2.0
// Runs a model whose sizes depend on the data (NonZero, TopK with a computed k; Nimble's upper-bound
// shape functions). Its bucket's plan is made with every such size at its upper bound, so the arena never
// grows with the data; a run then goes in stages, one per data-dependent op: the ops up to it run, the
// size it wrote is read back, and the ops after it run from the program of the sizes known so far (the
// bucket's template evaluated: the same offsets, the actual dims, bucket-plans.ts).
//
//   stage 1   ops [0, k1]     program at (input dims, every size at its bound)      -> read size 1
//   stage 2   ops (k1, k2]    program at (input dims, size 1, the rest at bound)     -> read size 2
//   last      ops (kn, end)   program at (input dims, every size read)              -> the outputs
import type { RunnablePlan } from './bucket-plans.js'
import type { Executor } from './executor.js'

export interface Stages {
  /** The program of the sizes read: it runs ops [begin, end) with the outputs. */
  readonly plan: RunnablePlan
  readonly begin: number
  /** With profile: the stages' per-op milliseconds, ops [0, begin). */
  readonly opMs: number[]
}

/**
 * Runs every stage but the last: `planFor(sizes)` gives the program of the input shape with the sizes
 * read so far (the others at their bound), `inputs(plan)` the input arrays of a program. The inputs are
 * copied in by the first stage.
 */
export async function runStages(
  planFor: (sizes: ReadonlyMap<string, number>) => Promise<RunnablePlan>,
  x: Executor,
  inputs: (plan: RunnablePlan) => Array<[number, ArrayBufferView]>,
  profile: boolean,
): Promise<Stages> {
  const sizes = new Map<string, number>()
  let plan = await planFor(sizes)
  const opMs: number[] = []
  const size = new BigInt64Array(1)
  let begin = 0
  for (const stage of plan.bucket?.stages ?? []) {
    const r = await x.run(plan.applied, begin === 0 ? inputs(plan) : [], [], { profile, opBegin: begin, opEnd: stage.op + 1 })
    if (r.opMs !== undefined) opMs.push(...r.opMs)
    x.session.read(plan.applied.plan.activationBase + stage.countOffset, size)
    sizes.set(stage.symbol, Number(size[0]))
    plan = await planFor(sizes)
    begin = stage.op + 1
  }
  return { plan, begin, opMs }
}
