// SPDX-License-Identifier: Apache-2.0
// ExecutionPlan: what every planner (plain, memory budget, elastic) hands the one executor
// (lib/runtime/executor.ts). A plan is data: a native program, the arena it needs, the bytes to put in
// the arena before its first run, and the load queue each run reads while it computes.
//
//   arena   [0, arenaBytes): one block per session. A plan applied after another keeps [0, keepBytes)
//           as it is (resident data both plans share); `resident` fills in the rest it needs.
//   program the op list and tensor slots of native/runtime/program.h. Slots of region 0 are arena
//           offsets, of region 1 offsets from `activationBase`, of region 2 + k the run's output k.
//   loads   the load queue of one run (FlexNN's load tasks): range j reads [fileOffset, bytes) of the
//           file into the arena once op after[j] is done; op k runs once loads [0, need[k]) are in.
//           Absent: every weight is resident and a run only computes.
//   buffers the memory layout the planner made, as FlexNN draws it (time x address): each buffer's
//           bytes and the ops during which they are taken. Data for pictures and checks; the
//           executor does not read it (the program and the loads already hold every offset).
//
// Run-time loads that depend on the inputs (the pages of an elastic encoder's token embedding rows)
// are not part of the plan: the executor puts them before the queue, and every op waits for them.
import type { DType } from '../model/dtype.js'
import type { TensorData } from '../model/ir.js'

/** Where a graph output's array is filled from. */
export type OutputSource =
  | { readonly kind: 'tensor'; readonly tensor: number }
  | { readonly kind: 'constant'; readonly data: TensorData }
  | { readonly kind: 'input'; readonly name: string }

export interface ProgramOutput {
  readonly name: string
  readonly dtype: DType
  readonly dims: number[]
  readonly source: OutputSource
}

/** A program and how its tensors meet the caller: what every program builder returns. */
export interface ProgramIo {
  /** The descriptor of native/runtime/program.h. */
  readonly program: Float64Array
  /** Graph inputs the program reads, with the tensor slot each is copied into. */
  readonly inputs: ReadonlyArray<{ readonly name: string; readonly tensor: number }>
  readonly outputs: readonly ProgramOutput[]
  /** Node name of each op, for error messages and profiles. */
  readonly opNodes: readonly string[]
  /** ONNX op type and native op name of each op, for profiles. */
  readonly opKinds: ReadonlyArray<{ readonly opType: string; readonly native: string }>
}

/** Bytes put into the arena when a plan is applied. */
export type ResidentWrite =
  | { readonly kind: 'data'; readonly offset: number; readonly data: ArrayBufferView }
  /** A constant's prepack transform (lib/model/ops/op-def.ts Prepack), computed into the arena at `offset`. */
  | { readonly kind: 'prepack'; readonly offset: number; readonly transform: string; readonly ints: readonly number[]; readonly weight: { readonly dtype: DType; readonly dims: readonly number[]; readonly bytes: Uint8Array } }
  /**
   * Ranges of a file: [fileOffset, bytes, arenaOffset] triples. 'buffered' reads through the page cache;
   * 'as-loads' reads as the load queue does (O_DIRECT and the throttle, when the engine has them).
   */
  | { readonly kind: 'file'; readonly path: string; readonly ranges: Float64Array; readonly mode: 'buffered' | 'as-loads' }

export interface LoadQueue {
  readonly path: string
  /** [fileOffset, bytes, arenaOffset] per load, in queue order. */
  readonly ranges: Float64Array
  /** Per load: the op that must be done before it starts (-1: none). */
  readonly after: Int32Array
  /** Per op: how many loads, a prefix of the queue, must be in before it runs (non-decreasing). */
  readonly need: Int32Array
}

/**
 * What a planned buffer holds: FlexNN's tensor types (weights, activations, intermediates), weights
 * told apart by how they reach the arena.
 */
export type BufferKind =
  /** A value passed between ops (graph inputs and outputs included). */
  | 'activation'
  /** An op's workspace or unnamed output, live during that op. */
  | 'intermediate'
  /** Constants and weights written when the plan is applied, kept for every run. */
  | 'resident'
  /** A weight read from the package once and kept at the top of the arena (memory budget). */
  | 'pinned'
  /** A weight read from the package during every run, into bytes it shares with other tensors over time. */
  | 'loaded'
  /** A shard version held in the preload buffer across runs (elastic). */
  | 'preloaded'
  /** A shard version read during every run into its layer's staging slot (elastic). */
  | 'staged'
  /** The pages of the word-embedding rows a run's tokens select, read before its first op (elastic). */
  | 'input-rows'

/** One rectangle of the memory layout: bytes at an offset, taken over a range of ops. */
export interface PlannedBuffer {
  readonly kind: BufferKind
  readonly name: string
  /** As the program's tensor slots: 0, `offset` is an arena offset; 1, it counts from activationBase. */
  readonly region: 0 | 1
  readonly offset: number
  readonly bytes: number
  /**
   * The ops during which the bytes are taken, inclusive: from the start of op `from` (for a weight
   * read during the run, from when its load may start) to the end of op `to`. Bytes written before
   * the run (inputs, resident data) count from op 0, bytes read after it (outputs) to the last op.
   */
  readonly from: number
  readonly to: number
}

/** The arena offset of a planned buffer. */
export function bufferOffset(plan: Pick<ExecutionPlan, 'activationBase'>, b: PlannedBuffer): number {
  return b.region === 1 ? plan.activationBase + b.offset : b.offset
}

export interface ArenaRegion {
  readonly name: string
  readonly offset: number
  readonly bytes: number
}

export interface ExecutionPlan extends ProgramIo {
  readonly arenaBytes: number
  /** Arena bytes [0, keepBytes) whose content the plan reuses from the plan before it. */
  readonly keepBytes: number
  readonly activationBase: number
  readonly resident: readonly ResidentWrite[]
  readonly loads?: LoadQueue
  /** The arena's parts, for stats and tests (resident, pinned, planned, preload, staging, activations, ...). */
  readonly regions: readonly ArenaRegion[]
  /** The memory layout: every buffer of the arena with the ops that take it (see the header). */
  readonly buffers: readonly PlannedBuffer[]
}

/** Bytes one run reads: the load queue's ranges. */
export function loadBytes(plan: Pick<ExecutionPlan, 'loads'>): number {
  const r = plan.loads?.ranges
  let n = 0
  if (r !== undefined) for (let j = 1; j < r.length; j += 3) n += r[j]!
  return n
}

/**
 * Checks the edges of a load queue against a program of `ops` ops: need is a non-decreasing prefix count
 * and no load waits for an op that needs that load or a later one (loads start in queue order and ops
 * run in order, so such a queue would deadlock). Throws a plain Error: a failed check is a planner bug.
 */
export function checkLoadQueue(q: LoadQueue, ops: number): void {
  const loads = q.ranges.length / 3
  if (!Number.isInteger(loads) || q.after.length !== loads) throw new Error(`load queue: ${q.after.length} edges for ${q.ranges.length / 3} loads`)
  if (q.need.length !== ops) throw new Error(`load queue: need has ${q.need.length} entries for ${ops} ops`)
  q.need.forEach((n, k) => {
    if (n < 0 || n > loads || (k > 0 && n < q.need[k - 1]!)) throw new Error(`load queue: need[${k}] = ${n} is not a growing prefix of ${loads} loads`)
  })
  q.after.forEach((a, j) => {
    if (a < -1 || a >= ops) throw new Error(`load queue: load ${j} waits for op ${a} of ${ops}`)
    if (a >= 0 && q.need[a]! > j) throw new Error(`load queue: load ${j} waits for op ${a}, which needs ${q.need[a]} loads`)
  })
}
