// SPDX-License-Identifier: Apache-2.0
// simulateGate: the makespan of one pipelined inference as the native gate runs it
// (native/runtime/pipeline_gate.h), from per-op compute times and per-load read times.
//
//   load j starts when load j - 1 has ended (one stream: the disk reads the queue in order) and op
//          after[j] has ended (its memory is free);   it ends loadMs[j] later
//   op k   starts when op k - 1 has ended and loads [0, need[k]) have ended;   it ends opMs[k] later
//
// The planner compares plans with it (which weights to pin, which kernels to use when reading is
// slow), where a max(compute, reads / bandwidth) estimate cannot see a preload window too small to keep
// the disk busy. Pure; O(ops + loads).
import { pipelineEdges, type PipelineEdges, type PipelineSchedule } from './pipeline-edges.js'

export interface PipelineTimes {
  /** When the last op ends (ms from the start of the inference). */
  readonly makespanMs: number
  /** Sum of opMs: the inference with every weight in memory. */
  readonly computeMs: number
  /** Sum of loadMs. */
  readonly readMs: number
  /** Time ops wait for loads, and the disk for freed memory (ms). */
  readonly computeWaitMs: number
  readonly loadWaitMs: number
}

/**
 * Simulates schedule `s`; opMs per op, loadMs per load. `edges`: pipelineEdges(s), for a caller that
 * simulates one schedule many times.
 */
export function simulateGate(s: PipelineSchedule, opMs: ArrayLike<number>, loadMs: ArrayLike<number>, edges: PipelineEdges = pipelineEdges(s)): PipelineTimes {
  const { after, need } = edges
  const L = s.loads.length
  const opEnd = new Float64Array(s.ops)
  const loadEnd = new Float64Array(L)
  let disk = 0 // when the previous load ended
  let cpu = 0 // when the previous op ended
  let computeWait = 0
  let loadWait = 0
  let computeMs = 0
  let readMs = 0
  let j = 0
  for (let k = 0; k < s.ops; k++) {
    // every load whose op has run (op after[j] < k) can be on its way before op k starts
    for (; j < L && after[j]! < k; j++) {
      const free = after[j]! < 0 ? 0 : opEnd[after[j]!]!
      if (free > disk) loadWait += free - disk
      disk = Math.max(disk, free) + loadMs[j]!
      readMs += loadMs[j]!
      loadEnd[j] = disk
    }
    const ready = need[k]! > 0 ? loadEnd[need[k]! - 1]! : 0
    if (ready > cpu) computeWait += ready - cpu
    cpu = Math.max(cpu, ready) + opMs[k]!
    computeMs += opMs[k]!
    opEnd[k] = cpu
  }
  for (; j < L; j++) {
    // loads nothing waits for (none in a plan, where every weight is read by a later op)
    disk += loadMs[j]!
    readMs += loadMs[j]!
  }
  return { makespanMs: cpu, computeMs, readMs, computeWaitMs: computeWait, loadWaitMs: loadWait }
}
