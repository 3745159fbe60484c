// SPDX-License-Identifier: Apache-2.0
// Engine: an opened model. Plans once per concrete input signature (shape inference, constant
// placement, memory plan, program), then runs programs in its native session, one at a time.
import { availableParallelism } from 'node:os'
import { ArgumentError, DisposedError, UnsupportedOperatorError, ValueNeededError } from '../errors.js'
import { allocArray, dtypeBytes, type DType } from '../model/dtype.js'
import { graphInputAncestors, inferGraph, type FoldFn, type InferredGraph } from '../model/infer-graph.js'
import type { Graph, TensorData, ValueInfo } from '../model/ir.js'
import { isExternal, numel } from '../model/ir.js'
import { loadOnnx } from '../model/onnx-import.js'
import { hostTensor } from '../model/values.js'
import { opDef } from '../model/ops/registry.js'
import { binding, type NativeSession } from '../native/binding.js'
import type { Tensor, TensorInfo } from '../tensor.js'
import { ConstantStore } from './constant-store.js'
import { checkFeeds } from './feeds.js'
import { fromNative } from './native-errors.js'
import { buildProgram, type ExecutionPlan } from './program-builder.js'
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
function checkSupported(graph: Graph): void {
  for (const node of graph.nodes) {
    if (node.domain !== '' || opDef(node.opType) === undefined) {
      throw new UnsupportedOperatorError(node.name, node.domain ? `${node.domain}.${node.opType}` : node.opType, graph.opset)
    }
  }
}

const foldNative: FoldFn = (node, call, inputs, outputs) => {
  const n = call.outputs ?? outputs.length
  const outs = outputs.slice(0, n).map((o) => ({ dtype: o.dtype, dims: o.dims as number[], data: allocArray(o.dtype, numel(o.dims as number[])) }))
  const ins = call.inputs.map((i) => {
    const t = i < 0 ? undefined : inputs[i]
    return t === undefined ? null : { dtype: dtypeCode(t.dtype), dims: t.dims, data: t.data }
  })
  try {
    binding().runOp(call.op, ins, outs.map((o) => ({ dtype: dtypeCode(o.dtype), dims: o.dims, data: o.data })), call.ints, call.floats)
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
    const graph = await loadOnnx(path)
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
    const outputs = graph.outputs.map((o) => ({ name: o.name, dtype: symbolic?.values.get(o.name)?.dtype ?? o.dtype, dims: symbolic?.values.get(o.name)?.dims ?? o.dims }))
    const engine = new Engine(graph, opts, outputs)
    for (const [k, v] of foldCache) engine.foldCache.set(k, v)
    if (symbolic !== undefined) await engine.placeConstants(symbolic, '')
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

  private async run(tensors: Tensor[]): Promise<Record<string, Tensor>> {
    const { plan, program } = await this.planFor(tensors)
    const byName = new Map(this.graph.inputs.map((d, i) => [d.name, tensors[i]!]))
    const outputs: Record<string, Tensor> = {}
    const pairs: Array<[number, ArrayBufferView]> = []
    for (const o of plan.outputs) {
      const data = allocArray(o.dtype, numel(o.dims))
      if (o.source.kind === 'constant') data.set(o.source.data.data as never)
      else if (o.source.kind === 'input') data.set(byName.get(o.source.name)!.data as never)
      else pairs.push([o.source.tensor, data])
      outputs[o.name] = { dtype: o.dtype, dims: o.dims, data }
    }
    const inputs = plan.inputs.map((i): [number, ArrayBufferView] => [i.tensor, byName.get(i.name)!.data])
    try {
      await this.live('infer').run(program, this.activationBase(), inputs, pairs)
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
    const plan = buildProgram(this.graph, inferred, (name, v) => this.constants.offsetOf(this.constantKey(inferred, name, v, key))!)
    await this.growArena(Math.max(this.activationBytes, plan.activationBytes), this.constants.bytes)
    this.activationBytes = Math.max(this.activationBytes, plan.activationBytes)
    let program: number
    try {
      program = this.live('infer').addProgram(plan.program)
    } catch (err) {
      throw fromNative(err)
    }
    const entry = { plan, program }
    this.plans.set(key, entry)
    if (this.plans.size > this.options.maxPlans) {
      const [oldKey, old] = this.plans.entries().next().value as [string, CachedPlan]
      this.plans.delete(oldKey)
      this.live('infer').removeProgram(old.program)
    }
    return entry
  }

  private constantKey(inferred: InferredGraph, name: string, v: ValueInfo, signature: string): string {
    if (inferred.staticValues.has(name)) return name
    return `${name}@${signature}:${v.dims.join('x')}`
  }

  /** Places every constant the steps read (and constant graph outputs) in the persistent region. */
  private async placeConstants(inferred: InferredGraph, signature: string): Promise<void> {
    const pending: Array<{ offset: number; value: ValueInfo }> = []
    const consider = (name: string): void => {
      const v = inferred.values.get(name)
      if (v === undefined || (v.tensor === undefined && hostTensor(v) === undefined)) return
      if (signature === '' && !inferred.staticValues.has(name)) return // symbolic pass: weights only
      const key = this.constantKey(inferred, name, v, signature)
      if (this.constants.offsetOf(key) !== undefined) return
      const bytes = numel(v.dims as number[]) * dtypeBytes(v.dtype as DType)
      pending.push({ offset: this.constants.reserve(key, bytes), value: v })
    }
    for (const step of inferred.steps) {
      if (step.kernel === undefined && step.aliasOf === undefined) {
        step.node.inputs.forEach((n) => n !== '' && consider(n))
      } else if (step.kernel !== undefined) {
        for (const i of step.kernel.inputs) if (i >= 0 && (step.node.inputs[i] ?? '') !== '') consider(step.node.inputs[i]!)
      }
    }
    if (pending.length === 0) return
    const oldEnd = pending[0]!.offset
    await this.growArena(this.activationBytes, oldEnd, true)
    const session = this.live('open')
    for (const { offset, value } of pending) {
      const t = value.tensor !== undefined && isExternal(value.tensor) ? value.tensor : undefined
      if (t !== undefined) {
        try {
          await session.readFile(t.path, new Float64Array([t.offset, t.length, offset]))
        } catch (err) {
          throw fromNative(err)
        }
      } else {
        const host = hostTensor(value) as TensorData
        session.write(offset, host.data)
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

/** Opens an ONNX model for inference. */
export function open(path: string, options?: OpenOptions): Promise<Engine> {
  return Engine.open(path, options)
}
