// SPDX-License-Identifier: Apache-2.0
// The pipeline model the planners plan against, run forward: when each IO job ends and each layer computes.
//
// 'pipelined': IO jobs run back to back in layer order from time 0 (job k reads layer k's shards
// that are not preloaded, readMsPerJob + bytes * readMsPerByte, or nothing at all); the fixed part
// computes during [0, F); layer k computes for c = layerComputeMs[width] from
// max(end of layer k-1 (F for k = 0), end of IO job k). 'load-then-execute': all jobs first, then
// F, then the layers without waiting. The makespan is when the last layer finishes.
import { bytesAt, modelOf, type Model } from './profile.js'
import { layoutOfPlan, type Layout } from './layout.js'
import type { ElasticProfile, ElasticSchedule, PipelineTimeline, PlanShape } from './types.js'

/** IO delay of each layer's job (0 for a layer whose shards are all preloaded). */
export function jobMs(model: Model, layout: Layout): Float64Array {
  const out = new Float64Array(layout.depth)
  for (let k = 0; k < layout.depth; k++) {
    let bytes = 0
    let loads = false
    for (let i = k * layout.width; i < (k + 1) * layout.width; i++) {
      if (layout.preloaded[i]) continue
      loads = true
      bytes += bytesAt(model, k, layout.shard[i]!, layout.bi[i]!)
    }
    out[k] = loads ? model.readMsPerJob + bytes * model.readMsPerByte : 0
  }
  return out
}

export function timelineOf(model: Model, layout: Layout, schedule: ElasticSchedule): PipelineTimeline {
  const jobs = jobMs(model, layout)
  const c = model.computeMs[layout.width]!
  const ioEndMs: number[] = []
  const computeStartMs: number[] = []
  const stallMs: number[] = []
  let io = 0
  for (let k = 0; k < layout.depth; k++) ioEndMs.push((io += jobs[k]!))
  let ready = schedule === 'pipelined' ? model.fixedMs : io + model.fixedMs
  for (let k = 0; k < layout.depth; k++) {
    const start = Math.max(ready, ioEndMs[k]!)
    stallMs.push(start - ready)
    computeStartMs.push(start)
    ready = start + c
  }
  return { totalMs: ready, ioEndMs, computeStartMs, stallMs }
}

/** Per-layer times of one inference of `plan` under the profile's delay model. */
export function pipelineTimeline(profile: ElasticProfile, plan: PlanShape): PipelineTimeline {
  const model = modelOf(profile)
  return timelineOf(model, layoutOfPlan(model, plan), plan.schedule ?? 'pipelined')
}

/** The modelled latency (makespan, ms) of one inference of `plan`. */
export function simulatePipeline(profile: ElasticProfile, plan: PlanShape): number {
  return pipelineTimeline(profile, plan).totalMs
}
