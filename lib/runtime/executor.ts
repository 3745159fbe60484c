// SPDX-License-Identifier: Apache-2.0
// Executor: the one place that runs plans. It applies an ExecutionPlan (lib/plan/execution-plan.ts) to
// its native session (arena size, resident data, program) and runs it: a plain run when the plan has no
// loads, else one pipelined run in which the session's load lane reads the queue while its compute lane
// runs the ops, each waiting for the other only at the plan's edges (native/runtime/pipeline_gate.h).
// Engines decide which plans to apply and when; the executor makes no decisions of its own.
import { checkLoadQueue, type ExecutionPlan, type LoadQueue, type ResidentWrite } from '../plan/execution-plan.js'
import type { NativePipelineResult, NativeReadOptions, NativeSession, WriteBatchJob } from '../native/binding.js'
import { dtypeCode } from '../model/dtype.js'
import { fromNative } from './native-errors.js'

/** Copies up to this many bytes in all, with no transform, are written synchronously (see writeResident). */
const syncWriteBytes = 1 << 20

/** A plan applied to the session: its program is in the session and runnable. */
export interface AppliedPlan {
  readonly plan: ExecutionPlan
  readonly program: number
}

export interface RunOptions {
  /** Record each op's time (and with loads, when it started and ended). */
  readonly profile?: boolean
  /**
   * Loads that depend on this run's inputs, [fileOffset, bytes, arenaOffset] triples of the plan's load
   * file: read before the plan's queue, and every op waits for them.
   */
  readonly inputLoads?: Float64Array
  /** How this run's loads read, in place of the engine's (a warm-up reads buffered, a profile as asked). */
  readonly read?: NativeReadOptions
  /**
   * Only ops [opBegin, opEnd) (a plan without loads): a run in stages (data-dims.ts). Inputs go with the
   * range that starts at op 0, outputs with the one that ends at the last op.
   */
  readonly opBegin?: number
  readonly opEnd?: number
}

/** What one run did. */
export interface RunReport {
  /** Per op, with `profile`: milliseconds (a wait for loads not included). */
  readonly opMs?: Float64Array
  /** With loads: what the pipelined run did (loadEndMs counts the input loads first). */
  readonly pipeline?: NativePipelineResult
  /** With loads: the queue the run read, the input loads first (what `pipeline` reports on). */
  readonly loads?: LoadQueue
}

export class Executor {
  /**
   * `read`: how this engine's loads read the package (O_DIRECT, a throttle, the request geometry); resident
   * writes in 'as-loads' mode read the same way.
   */
  constructor(
    readonly session: NativeSession,
    private readonly read: NativeReadOptions = {},
  ) {}

  /**
   * Applies a plan: sizes the arena (keeping [0, keepBytes)), writes its resident data, adds its program.
   * Plans applied before stay runnable until removed; their arena content is the caller's to keep valid.
   */
  async apply(plan: ExecutionPlan): Promise<AppliedPlan> {
    if (plan.loads !== undefined) checkLoadQueue(plan.loads, plan.opNodes.length)
    const s = this.session
    try {
      if (s.stats().arenaBytes !== plan.arenaBytes) s.resize(plan.arenaBytes, Math.min(plan.keepBytes, plan.arenaBytes))
      await this.writeResident(plan.resident)
      return { plan, program: s.addProgram(plan.program) }
    } catch (err) {
      throw fromNative(err)
    }
  }

  /** Removes an applied plan's program (its arena content stays). */
  remove(applied: AppliedPlan): void {
    this.session.removeProgram(applied.program)
  }

  /** Runs an applied plan once: inputs and outputs are [tensor slot, array] pairs of its program. */
  async run(
    applied: AppliedPlan,
    inputs: Array<[number, ArrayBufferView]>,
    outputs: Array<[number, ArrayBufferView]>,
    options: RunOptions = {},
  ): Promise<RunReport> {
    const { plan, program } = applied
    const profile = options.profile === true
    const queue = withInputLoads(plan.loads, options.inputLoads, plan.opNodes.length)
    try {
      if (options.opBegin !== undefined || options.opEnd !== undefined) {
        if (queue !== undefined && queue.ranges.length > 0) throw new Error('executor: a run in op ranges needs a plan without loads')
        const opMs = await this.session.run(program, plan.activationBase, inputs, outputs, profile, options.opBegin ?? 0, options.opEnd ?? plan.opNodes.length)
        return opMs === undefined ? {} : { opMs }
      }
      if (queue === undefined || queue.ranges.length === 0) {
        const opMs = await this.session.run(program, plan.activationBase, inputs, outputs, profile)
        return opMs === undefined ? {} : { opMs }
      }
      const r = await this.session.runPipeline(program, plan.activationBase, inputs, outputs, profile, queue.path, queue.ranges, queue.after, queue.need, options.read ?? this.read)
      return r.ops === undefined ? { pipeline: r, loads: queue } : { opMs: r.ops, pipeline: r, loads: queue }
    } catch (err) {
      throw fromNative(err, plan.opNodes)
    }
  }

  /**
   * A few copies and no transforms (an elastic re-plan's new constants) are written at once on the JS
   * thread: a write batch is a round trip through libuv's pool and the compute lane, which took 4-19 ms
   * now and then here for 280 KB (a re-plan past its deadline).
   * Data and transforms go to the session in one write batch (on its threads, each weight written once
   * into the arena, native/runtime/write_batch.h); file ranges are read after it.
   */
  private async writeResident(writes: readonly ResidentWrite[]): Promise<void> {
    const jobs: WriteBatchJob[] = []
    for (const w of writes) {
      if (w.kind === 'data') jobs.push({ offset: w.offset, data: w.data })
      else if (w.kind === 'prepack') jobs.push({ offset: w.offset, transform: w.transform, ints: w.ints, dtype: dtypeCode(w.weight.dtype), dims: w.weight.dims, data: w.weight.bytes })
    }
    if (jobs.every((j) => !('transform' in j)) && jobs.reduce((n, j) => n + j.data.byteLength, 0) <= syncWriteBytes) {
      for (const j of jobs) this.session.write(j.offset, j.data)
    } else if (jobs.length > 0) await this.session.writeBatch(jobs)
    for (const w of writes) {
      if (w.kind === 'file' && w.ranges.length > 0) await this.session.readFile(w.path, w.ranges, w.mode === 'as-loads' ? this.read : { direct: false })
    }
  }
}

/** The plan's load queue with a run's input loads in front (every op waits for them). */
function withInputLoads(queue: LoadQueue | undefined, inputLoads: Float64Array | undefined, ops: number): LoadQueue | undefined {
  if (inputLoads === undefined || inputLoads.length === 0) return queue
  if (queue === undefined) throw new Error('executor: input loads need a plan with a load file')
  const first = inputLoads.length / 3
  const ranges = new Float64Array(inputLoads.length + queue.ranges.length)
  ranges.set(inputLoads)
  ranges.set(queue.ranges, inputLoads.length)
  const after = new Int32Array(first + queue.after.length).fill(-1)
  after.set(queue.after, first)
  const need = new Int32Array(ops)
  for (let k = 0; k < ops; k++) need[k] = first + queue.need[k]!
  return { path: queue.path, ranges, after, need }
}
