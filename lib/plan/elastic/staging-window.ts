// SPDX-License-Identifier: Apache-2.0
// How many layers of staged shards the executor must hold so that the pipeline runs as planned.
//
// The planners model IO jobs back to back from time 0, so IO may run many layers ahead of compute
// and, without a bound, every shard loaded in an inference would sit in memory at once. With a ring
// of W layer slots, IO job k may start only once layer k - W has computed (its slot is free again).
// `stagingWindow` returns the smallest W for which that constrained pipeline finishes no later than
// the unconstrained one (so the plan's modelled latency, and its AIB guarantee, are unchanged);
// W = depth is always such a window. Pure; 'load-then-execute' plans need every layer staged.
import { modelOf } from './profile.js'
import { layoutOfPlan } from './layout.js'
import { jobMs, timelineOf } from './simulate.js'
import type { ElasticProfile, PlanShape } from './types.js'

/** Makespan of the pipeline when IO job k waits for layer k - window to finish computing. */
export function windowedMakespan(jobs: ArrayLike<number>, computeMs: number, fixedMs: number, window: number): number {
  const n = jobs.length
  const computeEnd: number[] = []
  let ioEnd = 0
  let ready = fixedMs
  for (let k = 0; k < n; k++) {
    const slotFree = k >= window ? computeEnd[k - window]! : 0
    ioEnd = Math.max(ioEnd, slotFree) + jobs[k]!
    const start = Math.max(ready, ioEnd)
    ready = start + computeMs
    computeEnd.push(ready)
  }
  return n === 0 ? fixedMs : ready
}

export function stagingWindow(profile: ElasticProfile, plan: PlanShape): number {
  const model = modelOf(profile)
  const layout = layoutOfPlan(model, plan)
  const depth = layout.depth
  if ((plan.schedule ?? 'pipelined') === 'load-then-execute' || depth === 0) return Math.max(1, depth)
  const jobs = jobMs(model, layout)
  const c = model.computeMs[layout.width]!
  const free = timelineOf(model, layout, 'pipelined').totalMs
  for (let w = 1; w < depth; w++) {
    if (windowedMakespan(jobs, c, model.fixedMs, w) <= free + 1e-9 * Math.max(1, free)) return w
  }
  return depth
}
