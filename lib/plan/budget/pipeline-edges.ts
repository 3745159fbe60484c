// SPDX-License-Identifier: Apache-2.0
// The load and compute queues of one inference and their dependency edges (FlexNN's dependency-based
// sync):
//
//   load(j) < comp(step(j))        a weight is loaded before the op that reads it runs
//   comp(after(j)) < load(j)       a weight's bytes are free only once op after(j) is done (the memory
//                                  plan's overlap edges; -1: no dependency)
//
// TypeScript orders both queues (loads in the type-based allocator's weight order, ops in program
// order) and derives the edges; `pipelineEdges` encodes them as the two arrays the native session's
// runPipeline takes (native/runtime/pipeline_gate.h), which runs the queues on its load and compute
// lanes with each lane waiting on the other only at these edges. The waits used to be JavaScript's: the
// load queue issued batches of up to 32 MiB and the compute queue ran op ranges between them, so a
// layer's compute waited for its whole batch and the disk idled between batches (ResNet-152 at 100 MB,
// 2 threads: compute idle 58 ms and the disk 45 ms of a 205 ms inference). Per-load completion with
// the disk kept busy across loads needs the waits where the completions are, in native code.
// With every weight pinned there are no loads and an inference is a plain run.

export interface PipelineLoad {
  /** The op that reads the weight. */
  readonly step: number
  /** The op that must finish before the load may start (-1: none). */
  readonly after: number
  /** Bytes read. */
  readonly bytes?: number
}

export interface PipelineSchedule {
  readonly ops: number
  /** Loads in queue order. */
  readonly loads: readonly PipelineLoad[]
}

/** For each op k, how many loads (a prefix of the queue) must be done before k runs. */
export function loadsNeeded(s: PipelineSchedule): Int32Array {
  const need = new Int32Array(s.ops + 1)
  s.loads.forEach((l, j) => {
    if (l.after >= l.step) throw new Error(`pipeline: load ${j} waits for op ${l.after} but op ${l.step} reads it`)
    need[l.step] = Math.max(need[l.step]!, j + 1)
  })
  for (let k = 1; k <= s.ops; k++) need[k] = Math.max(need[k]!, need[k - 1]!)
  return need
}

/** The edges as runPipeline takes them: after[j] per load, need[k] per op. */
export interface PipelineEdges {
  readonly after: Int32Array
  readonly need: Int32Array
}

/**
 * The native form of a schedule's edges. Throws if a load waits for an op that needs that load or a
 * later one (loads start in queue order and ops run in order, so such a schedule would deadlock).
 */
export function pipelineEdges(s: PipelineSchedule): PipelineEdges {
  const need = loadsNeeded(s).subarray(0, s.ops)
  const after = Int32Array.from(s.loads, (l) => l.after)
  after.forEach((a, j) => {
    if (a >= 0 && need[a]! > j) throw new Error(`pipeline: load ${j} waits for op ${a}, which needs ${need[a]} loads`)
  })
  return { after, need }
}
