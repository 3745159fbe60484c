// SPDX-License-Identifier: Apache-2.0
// Seeded random load/compute schedules of the shape the memory plan produces: loads in queue order with
// non-decreasing steps, each waiting for an op before its step (or none).
import type { PipelineLoad, PipelineSchedule } from '../../lib/plan/budget/pipeline-edges.js'

export type Rand = () => number
export const int = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

/** 1..maxOps ops and 0..maxLoads loads. */
export function randomSchedule(rand: Rand, maxOps: number, maxLoads: number): PipelineSchedule {
  const ops = int(rand, 1, maxOps)
  const n = int(rand, 0, maxLoads)
  const steps = Array.from({ length: n }, () => int(rand, 0, ops - 1)).sort((a, b) => a - b)
  const loads: PipelineLoad[] = steps.map((step) => ({ step, after: rand() < 0.3 ? -1 : int(rand, -1, step - 1) }))
  return { ops, loads }
}
