// SPDX-License-Identifier: Apache-2.0
// EngineBase: what every engine (plain ONNX, memory budget, latency target) shares: one native session
// run by one executor, calls queued one at a time, feeds checked against the model's inputs, outputs in
// fresh arrays, profiled runs, stats and disposal. An engine adds its planner: how it opens, which plan
// each call runs, and what it re-plans between calls.
import { DisposedError } from '../errors.js'
import type { ValueDecl } from '../model/ir.js'
import type { Tensor, TensorInfo } from '../model/tensor.js'
import { binding, type NativeReadOptions } from '../native/binding.js'
import type { ExecutionPlan, ProgramIo } from '../plan/execution-plan.js'
import type { ModelKind } from '../validate.js'
import { Executor, type RunReport } from './executor.js'
import { checkFeeds } from './feeds.js'
import { SerialQueue } from './serial-queue.js'

/** One native op of a profiled inference. */
export interface OpTiming {
  /** The graph node it runs (or a part of, when the node is sliced). */
  readonly node: string
  readonly opType: string
  /** The native op. */
  readonly native: string
  /** The kernel the planner chose for the node's layer, where it chose one (memory-budget engines). */
  readonly kernel?: string
  readonly ms: number
}

/** The op timings of a profiled run of `program`; `kernelOf` names the kernel chosen for a node's layer. */
export function opTimings(program: Pick<ProgramIo, 'opNodes' | 'opKinds'>, ms: Float64Array, kernelOf?: (node: string) => string | undefined): OpTiming[] {
  return program.opNodes.map((node, i) => {
    const kind = program.opKinds[i]!
    const kernel = kernelOf?.(node)
    return { node, opType: kind.opType, native: kind.native, ...(kernel === undefined ? {} : { kernel }), ms: ms[i]! }
  })
}

/** What a profiled inference ran: the plan (program, memory layout, load queue) and the run's report. */
export interface TracedRun {
  readonly plan: ExecutionPlan
  readonly report: RunReport
}

/** What one inference of an engine returns to the base class. */
export interface Computed {
  readonly outputs: Record<string, Tensor>
  /** With profiling: each op's time, and what the run ran. */
  readonly ops?: OpTiming[]
  readonly run?: TracedRun
}

export interface EngineStats {
  readonly arenaBytes: number
  readonly reader: string
  readonly threads: number
  /** Bytes read from the package since the engine opened. */
  readonly bytesRead: number
}

export interface SessionOptions {
  readonly threads: number
  readonly io: 'auto' | 'uring' | 'pread'
  /** How the engine's loads read (O_DIRECT, throttle, geometry). */
  readonly read?: NativeReadOptions
}

export abstract class EngineBase {
  /** What the opened file is: an ONNX model, a memory-budget package or an elastic package. */
  abstract readonly kind: ModelKind
  readonly inputs: readonly TensorInfo[]
  readonly outputs: readonly TensorInfo[]
  protected readonly queue = new SerialQueue()
  private x: Executor | undefined

  protected constructor(
    /** The inputs feeds are checked against (dims may be symbolic). */
    private readonly inputDecls: readonly ValueDecl[],
    outputs: readonly TensorInfo[],
    session: SessionOptions,
  ) {
    this.inputs = inputDecls.map((d) => ({ name: d.name, dtype: d.dtype, dims: d.dims }))
    this.outputs = outputs
    this.x = new Executor(new (binding().Session)(session.threads, session.io), session.read)
  }

  /** Runs the model. Calls are queued: concurrent calls run one after another. */
  infer(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    return this.queued('infer', feeds, async (tensors) => (await this.compute(tensors, false)).outputs)
  }

  /**
   * Like infer(), and also reports each native op's wall time (planning excluded). For benchmarks,
   * device profiles and tuning; timing adds two clock reads per op.
   */
  inferProfiled(feeds: Record<string, Tensor>): Promise<{ outputs: Record<string, Tensor>; ops: OpTiming[] }> {
    return this.queued('inferProfiled', feeds, async (tensors) => {
      const r = await this.compute(tensors, true)
      return { outputs: r.outputs, ops: r.ops ?? [] }
    })
  }

  /**
   * Like inferProfiled(), and also what the inference ran: its ExecutionPlan and the run's report (each
   * op's time and, with loads, when each op ran and each load was in). `flexpipe plan --trace` draws it.
   */
  inferTraced(feeds: Record<string, Tensor>): Promise<{ outputs: Record<string, Tensor>; ops: OpTiming[]; run: TracedRun }> {
    return this.queued('inferTraced', feeds, async (tensors) => {
      const r = await this.compute(tensors, true)
      if (r.run === undefined) throw new Error(`${this.kind} engine: a profiled run reported nothing`)
      return { outputs: r.outputs, ops: r.ops ?? [], run: r.run }
    })
  }

  /**
   * The ExecutionPlan an inference on `feeds` runs: its program, memory layout (`buffers`: FlexNN's time
   * x address picture) and load queue. An ONNX model's engine plans for the feeds' shapes now, as infer()
   * would; the other engines return the plan in force. `flexpipe plan --svg` draws it.
   */
  executionPlan(feeds: Record<string, Tensor>): Promise<ExecutionPlan> {
    return this.queued('executionPlan', feeds, (tensors) => this.planOf(tensors))
  }

  /** Waits for queued calls, then frees the arena. Idempotent. */
  async close(): Promise<void> {
    const x = this.x
    if (x === undefined) return
    await this.queue.idle()
    this.x = undefined
    x.session.dispose()
  }

  /** Resolves once every queued call and re-plan has finished. */
  settled(): Promise<void> {
    return this.queue.idle()
  }

  /** The session's figures; engines add their planner's. */
  protected sessionStats(): EngineStats {
    const s = this.executor('stats').session.stats()
    return { arenaBytes: s.arenaBytes, reader: s.reader, threads: s.threads, bytesRead: s.bytesRead ?? 0 }
  }

  /** The executor, or DisposedError naming `what` after close(). */
  protected executor(what: string): Executor {
    if (this.x === undefined) throw new DisposedError(what)
    return this.x
  }

  /** One inference on checked feeds (in input order), on the plan in force; with `profile`, its ops and run. */
  protected abstract compute(tensors: Tensor[], profile: boolean): Promise<Computed>

  /** The plan an inference on checked feeds runs. */
  protected abstract planOf(tensors: Tensor[]): Promise<ExecutionPlan>

  /** Checks the feeds now (a bad call rejects at once) and queues the job. */
  protected queued<T>(what: string, feeds: Record<string, Tensor>, job: (tensors: Tensor[]) => Promise<T>): Promise<T> {
    if (this.x === undefined) return Promise.reject(new DisposedError(what))
    let tensors: Tensor[]
    try {
      tensors = checkFeeds(feeds, this.inputDecls)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(() => job(tensors))
  }
}
