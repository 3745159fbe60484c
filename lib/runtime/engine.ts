// SPDX-License-Identifier: Apache-2.0
// Engine: an opened model. Plans once per concrete input signature (shape inference, constant
// placement, memory plan, program), then runs programs in its native session, one at a time.
import { availableParallelism } from 'node:os'
import { ArgumentError, DisposedError, UnsupportedOperatorError, ValueNeededError } from '../errors.js'
import { allocArray } from '../model/dtype.js'
import { graphInputAncestors, inferGraph, type FoldFn, type InferredGraph } from '../model/infer-graph.js'
import type { Graph, TensorData, ValueInfo } from '../model/ir.js'
import { isExternal, numel, valueBytes } from '../model/ir.js'
import { loadOnnx } from '../model/onnx-import.js'
import { fuseActivations } from '../model/fuse-activations.js'
import { fuseConvDepthwise } from '../model/fuse-conv-depthwise.js'
import { fuseConvPools } from '../model/fuse-conv-pool.js'
import { fuseResidualAdds } from '../model/fuse-residual.js'
import { hostTensor, sameDims } from '../model/values.js'
import { opDef } from '../model/ops/registry.js'
import { binding, type NativeSession } from '../native/binding.js'
import type { Tensor, TensorInfo } from '../tensor.js'
import { ConstantStore } from './constant-store.js'
import { constantHost, prepackKey, runPrepack } from './constants.js'
import type { Prepack } from '../model/ops/op-def.js'
import { checkFeeds } from './feeds.js'
import { fromNative } from './native-errors.js'
import { buildProgram, type ExecutionPlan } from '../plan/program-builder.js'
import { outputArrays } from './output-arrays.js'
import { SerialQueue } from './serial-queue.js'
import { dtypeCode } from '../model/dtype.js'

export interface OpenOptions {
  /** Threads for compute (OpenMP). Default: available cores, at most 4. */
  readonly threads?: number
  /** File reader: io_uring when available ('auto'), or force 'uring' / 'pread'. */
  readonly io?: 'auto' | 'uring' | 'pread'
  /** Input signatures whose plans are kept (least recently used are dropped). Default 16. */
  readonly maxPlans?: number
}

interface CachedPlan {
  readonly plan: ExecutionPlan
  readonly program: number
  /** For each of the plan's inputs, the position of its graph input among infer()'s tensors. */
  readonly inputIndex: readonly number[]
}

/** Whether the tensors have the dims of `dims`, tensor by tensor. */
function haveDims(tensors: readonly Tensor[], dims: ReadonlyArray<readonly number[]>): boolean {
  return tensors.length === dims.length && tensors.every((t, i) => sameDims(t.dims, dims[i]!))
}

export interface OpTiming {
  readonly node: string
  readonly opType: string
  readonly native: string
  readonly ms: number
}

export interface EngineStats {
  readonly arenaBytes: number
  readonly persistentBytes: number
  readonly activationBytes: number
  readonly plans: number
  readonly reader: string
  readonly threads: number
}

const activationAlignment = 4096
const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a

function checkOptions(options: OpenOptions): Required<OpenOptions> {
  const threads = options.threads ?? Math.min(availableParallelism(), 4)
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw new ArgumentError(`threads: expected integer 1..256, got ${options.threads}`)
  const io = options.io ?? 'auto'
  if (io !== 'auto' && io !== 'uring' && io !== 'pread') throw new ArgumentError(`io: expected 'auto', 'uring' or 'pread', got ${String(io)}`)
  const maxPlans = options.maxPlans ?? 16
  if (!Number.isInteger(maxPlans) || maxPlans < 1) throw new ArgumentError(`maxPlans: expected a positive integer, got ${options.maxPlans}`)
  return { threads, io, maxPlans }
}

/** Every node must have an operator definition; the first that has none is reported. */
export function checkSupported(graph: Graph): void {
  for (const node of graph.nodes) {
    if (node.domain !== '' || opDef(node.opType) === undefined) {
      throw new UnsupportedOperatorError(node.name, node.domain ? `${node.domain}.${node.opType}` : node.opType, graph.opset)
    }
  }
}

export const foldNative: FoldFn = (node, call, inputs, outputs) => {
  const n = call.outputs ?? outputs.length
  const outs = outputs.slice(0, n).map((o) => ({ dtype: o.dtype, dims: o.dims as number[], data: allocArray(o.dtype, numel(o.dims as number[])) }))
  const ins = call.inputs.map((i, j) => {
    let t = i < 0 ? undefined : inputs[i]
    const p = call.prepack?.find((q) => q.input === j)
    if (t !== undefined && p !== undefined) t = runPrepack(t, p, node.name)
    return t === undefined ? null : { dtype: dtypeCode(t.dtype), dims: t.dims, data: t.data }
  })
  const nativeOuts = outs.map((o) => ({ dtype: dtypeCode(o.dtype), dims: o.dims, data: o.data as ArrayBufferView }))
  if (call.workspace) nativeOuts.push({ dtype: dtypeCode('uint8'), dims: [call.workspace], data: new Uint8Array(call.workspace) })
  try {
    binding().runOp(call.op, ins, nativeOuts, call.ints, call.floats)
  } catch (err) {
    throw fromNative(err, [node.name])
  }
  return outs
}

export class Engine {
  readonly inputs: readonly TensorInfo[]
  readonly outputs: readonly TensorInfo[]
  private readonly graph: Graph
  private readonly options: Required<OpenOptions>
  private session: NativeSession | undefined
  private readonly constants = new ConstantStore()
  private readonly foldCache = new Map<string, ValueInfo[]>()
  private readonly plans = new Map<string, CachedPlan>()
  /**
   * The plan of the previous call and its input dims: a server calls with one shape again and again,
   * and finding the plan then takes a comparison instead of building its key (every call's JS runs
   * with caches the run before just emptied; node dist/bench/models/call-overhead.js).
   */
  private last: { readonly dims: ReadonlyArray<readonly number[]>; readonly entry: CachedPlan } | undefined
  private readonly queue = new SerialQueue()
  private activationBytes = 0
  /** Graph inputs whose contents shape the plan (shape, pads, scales fed as inputs): part of the plan key. */
  private readonly valueInputs = new Set<string>()

  private constructor(graph: Graph, options: Required<OpenOptions>, outputs: readonly TensorInfo[]) {
    this.graph = graph
    this.options = options
    this.inputs = graph.inputs.map((d) => ({ name: d.name, dtype: d.dtype, dims: d.dims }))
    this.outputs = outputs
    this.session = new (binding().Session)(options.threads, options.io)
  }

  /** Opens an ONNX model: import, symbolic shape inference, constant folding, weight placement. */
  static async open(path: string, options: OpenOptions = {}): Promise<Engine> {
    const opts = checkOptions(options)
    let graph = fuseActivations(await loadOnnx(path))
    checkSupported(graph)
    const inputs = new Map<string, ValueInfo>()
    for (const d of graph.inputs) if (d.dims !== undefined) inputs.set(d.name, { dtype: d.dtype, dims: d.dims })
    const foldCache = new Map<string, ValueInfo[]>()
    let symbolic: InferredGraph | undefined
    if (inputs.size === graph.inputs.length) {
      try {
        symbolic = inferGraph(graph, inputs, { concrete: false, fold: foldNative, foldCache })
      } catch (err) {
        // Shapes that depend on input contents are planned per infer() call; anything else is fatal.
        if (!(err instanceof ValueNeededError)) throw err
      }
    }
    if (symbolic !== undefined) {
      // Residual Adds fuse into their Conv where the (symbolic) shapes say so; without shapes, no fusion.
      const fused = fuseResidualAdds(graph, symbolic.values)
      if (fused !== graph) {
        graph = fuseActivations(fused)
        symbolic = inferGraph(graph, inputs, { concrete: false, fold: foldNative, foldCache })
      }
      // Then a stem and its max pool, computed together in bands of rows (lib/model/fuse-conv-pool.ts).
      const pooled = fuseConvPools(graph, symbolic.values)
      if (pooled !== graph) {
        graph = pooled
        symbolic = inferGraph(graph, inputs, { concrete: false, fold: foldNative, foldCache })
      }
      // And a conv and the depthwise 3x3 after it (lib/model/fuse-conv-depthwise.ts).
      const banded = fuseConvDepthwise(graph, symbolic.values)
      if (banded !== graph) {
        graph = banded
        symbolic = inferGraph(graph, inputs, { concrete: false, fold: foldNative, foldCache })
      }
    }
    const outputs = graph.outputs.map((o) => ({ name: o.name, dtype: symbolic?.values.get(o.name)?.dtype ?? o.dtype, dims: symbolic?.values.get(o.name)?.dims ?? o.dims }))
    const engine = new Engine(graph, opts, outputs)
    for (const [k, v] of foldCache) engine.foldCache.set(k, v)
    return engine
  }

  /** Runs the model. Calls are queued: concurrent infer() calls run one after another. */
  infer(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    if (this.session === undefined) return Promise.reject(new DisposedError('infer'))
    let tensors: Tensor[]
    try {
      tensors = checkFeeds(feeds, this.graph.inputs)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(() => this.run(tensors))
  }

  /**
   * Like infer(), and also reports each native op's wall time (planning excluded). For benchmarks
   * and tuning; timing adds a clock read per op.
   */
  inferProfiled(feeds: Record<string, Tensor>): Promise<{ outputs: Record<string, Tensor>; ops: OpTiming[] }> {
    if (this.session === undefined) return Promise.reject(new DisposedError('inferProfiled'))
    let tensors: Tensor[]
    try {
      tensors = checkFeeds(feeds, this.graph.inputs)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(async () => {
      const ops: OpTiming[] = []
      const outputs = await this.run(tensors, (plan, times) => {
        plan.opNodes.forEach((node, i) => ops.push({ node, opType: plan.opKinds[i]!.opType, native: plan.opKinds[i]!.native, ms: times[i]! }))
      })
      return { outputs, ops }
    })
  }

  /** Waits for queued inferences, then frees the arena. Idempotent. */
  async close(): Promise<void> {
    const session = this.session
    if (session === undefined) return
    await this.queue.idle()
    this.session = undefined
    session.dispose()
  }

  stats(): EngineStats {
    const s = this.live('stats').stats()
    return {
      arenaBytes: s.arenaBytes,
      persistentBytes: this.constants.bytes,
      activationBytes: this.activationBytes,
      plans: this.plans.size,
      reader: s.reader,
      threads: s.threads,
    }
  }

  private live(what: string): NativeSession {
    if (this.session === undefined) throw new DisposedError(what)
    return this.session
  }

  private async run(tensors: Tensor[], profile?: (plan: ExecutionPlan, opMs: Float64Array) => void): Promise<Record<string, Tensor>> {
    const { plan, program, inputIndex } = await this.planFor(tensors)
    const { outputs, buffers: pairs } = outputArrays(plan.outputs, (name) => tensors[this.graph.inputs.findIndex((d) => d.name === name)]!)
    const inputs = plan.inputs.map((i, k): [number, ArrayBufferView] => [i.tensor, tensors[inputIndex[k]!]!.data])
    try {
      const times = await this.live('infer').run(program, this.activationBase(), inputs, pairs, profile !== undefined)
      if (profile !== undefined && times !== undefined) profile(plan, times)
    } catch (err) {
      throw fromNative(err, plan.opNodes)
    }
    return outputs
  }

  private activationBase(): number {
    return alignUp(this.constants.bytes, activationAlignment)
  }

  private planKey(tensors: Tensor[]): string {
    return tensors
      .map((t, i) => {
        const name = this.graph.inputs[i]!.name
        const values = this.valueInputs.has(name) ? `=${Array.from(t.data as ArrayLike<number | bigint>, String).join(',')}` : ''
        return `${name}:${t.dims.join('x')}${values}`
      })
      .join('|')
  }

  /** Concrete shape inference; inputs whose contents an op needs are added to the plan key and retried. */
  private inferConcrete(tensors: Tensor[]): InferredGraph {
    for (;;) {
      const inputs = new Map<string, ValueInfo>(
        this.graph.inputs.map((d, i) => {
          const t = tensors[i]!
          if (!this.valueInputs.has(d.name)) return [d.name, { dtype: d.dtype, dims: t.dims }]
          return [d.name, { dtype: d.dtype, dims: t.dims, values: Array.from(t.data as ArrayLike<number | bigint>, Number) }]
        }),
      )
      try {
        return inferGraph(this.graph, inputs, { concrete: true, fold: foldNative, foldCache: this.foldCache })
      } catch (err) {
        const fresh = err instanceof ValueNeededError && err.valueName !== undefined ? graphInputAncestors(this.graph, err.valueName).filter((n) => !this.valueInputs.has(n)) : []
        const small = fresh.filter((n) => tensors[this.graph.inputs.findIndex((d) => d.name === n)]!.data.length <= 4096)
        if (small.length === 0) throw err
        small.forEach((n) => this.valueInputs.add(n))
      }
    }
  }

  private async planFor(tensors: Tensor[]): Promise<CachedPlan> {
    const last = this.last
    // Only shapes key the plan unless some input's contents do (valueInputs).
    if (last !== undefined && this.valueInputs.size === 0 && haveDims(tensors, last.dims)) return last.entry
    const entry = await this.findPlan(tensors)
    this.last = this.valueInputs.size === 0 ? { dims: tensors.map((t) => t.dims.slice()), entry } : undefined
    return entry
  }

  private async findPlan(tensors: Tensor[]): Promise<CachedPlan> {
    let key = this.planKey(tensors)
    const cached = this.plans.get(key)
    if (cached !== undefined) {
      this.plans.delete(key)
      this.plans.set(key, cached) // most recently used last
      return cached
    }
    const inferred = this.inferConcrete(tensors)
    key = this.planKey(tensors)
    await this.placeConstants(inferred, key)
    const plan = buildProgram(this.graph, inferred, (name, v, p) => this.constants.get(this.constantKey(inferred, name, v, key, p))!, { outputsInPlace: true })
    await this.growArena(Math.max(this.activationBytes, plan.activationBytes), this.constants.bytes)
    this.activationBytes = Math.max(this.activationBytes, plan.activationBytes)
    let program: number
    try {
      program = this.live('infer').addProgram(plan.program)
    } catch (err) {
      throw fromNative(err)
    }
    const entry = { plan, program, inputIndex: plan.inputs.map((i) => this.graph.inputs.findIndex((d) => d.name === i.name)) }
    this.plans.set(key, entry)
    if (this.plans.size > this.options.maxPlans) {
      const [oldKey, old] = this.plans.entries().next().value as [string, CachedPlan]
      this.plans.delete(oldKey)
      if (this.last?.entry === old) this.last = undefined
      this.live('infer').removeProgram(old.program)
    }
    return entry
  }

  private constantKey(inferred: InferredGraph, name: string, v: ValueInfo, signature: string, p?: Prepack): string {
    const base = inferred.staticValues.has(name) ? name : `${name}@${signature}:${v.dims.join('x')}`
    return p === undefined ? base : base + prepackKey(p)
  }

  /** Places every constant the kernels read (transformed where they ask for it) in the persistent region. */
  private async placeConstants(inferred: InferredGraph, signature: string): Promise<void> {
    const pending: Array<{ offset: number; value: ValueInfo; host?: TensorData }> = []
    const oldEnd = this.constants.bytes
    const consider = (name: string, node: string, p?: Prepack): void => {
      const v = inferred.values.get(name)
      if (v === undefined || (v.tensor === undefined && hostTensor(v) === undefined)) return
      const key = this.constantKey(inferred, name, v, signature, p)
      if (this.constants.get(key) !== undefined) return
      if (p === undefined) {
        const bytes = valueBytes(v)
        pending.push({ offset: this.constants.reserve(key, v.dtype, v.dims as number[], bytes).offset, value: v })
      } else {
        const host = runPrepack(constantHost(v), p, node)
        pending.push({ offset: this.constants.reserve(key, host.dtype, host.dims, host.data.byteLength).offset, value: v, host })
      }
    }
    for (const step of inferred.steps) {
      step.kernel?.inputs.forEach((i, j) => {
        const name = i < 0 ? '' : (step.node.inputs[i] ?? '')
        if (name !== '') consider(name, step.node.name, step.kernel!.prepack?.find((p) => p.input === j))
      })
    }
    for (const o of this.graph.outputs) {
      const v = inferred.values.get(o.name)
      if (v !== undefined && hostTensor(v) === undefined) consider(o.name, o.name) // external initializer as output
    }
    if (pending.length === 0) return
    await this.growArena(this.activationBytes, oldEnd, true)
    const session = this.live('open')
    for (const { offset, value, host } of pending) {
      const t = value.tensor !== undefined && isExternal(value.tensor) ? value.tensor : undefined
      if (host !== undefined) {
        session.write(offset, host.data)
      } else if (t !== undefined) {
        try {
          await session.readFile(t.path, new Float64Array([t.offset, t.length, offset]))
        } catch (err) {
          throw fromNative(err)
        }
      } else {
        session.write(offset, (hostTensor(value) as TensorData).data)
      }
    }
  }

  /** Sizes the arena for the persistent region plus `activations`, keeping `keep` bytes. */
  private async growArena(activations: number, keep: number, force = false): Promise<void> {
    const session = this.live('plan')
    const want = alignUp(this.constants.bytes, activationAlignment) + activations
    if (!force && session.stats().arenaBytes >= want) return
    try {
      session.resize(Math.max(want, session.stats().arenaBytes), keep)
    } catch (err) {
      throw fromNative(err)
    }
  }
}
