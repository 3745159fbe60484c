// SPDX-License-Identifier: Apache-2.0
// Engine: an ONNX model with every weight in memory. Its planner (shape inference, constant placement,
// memory plan, program) runs once per shape bucket, at the bucket's ceiling (bucket-plans.ts: every
// shape in the bucket then runs that plan through its template), and once per input signature where a
// bucket has no template or input contents shape the plan. Each emits an ExecutionPlan whose resident
// writes are the constants it adds; the plans stay applied.
//
//   arena  [constants of every plan so far | activations of the largest plan]
import { resolve } from 'node:path'
import { OptionError, UnsupportedOperatorError, ValueNeededError } from '../errors.js'
import { alignUp } from '../align.js'
import { constantHost, prepackKey } from '../model/constant-data.js'
import { fuseGraph, symbolicShapes } from '../model/fuse-graph.js'
import { graphInputAncestors, inferGraph, type InferredGraph } from '../model/infer-graph.js'
import type { ExternalTensor, Graph, TensorData, ValueInfo } from '../model/ir.js'
import { isExternal, numel, tensorBytes, valueBytes } from '../model/ir.js'
import { dtypeBytes } from '../model/dtype.js'
import { loadOnnx } from '../model/onnx-import.js'
import type { Prepack } from '../model/ops/op-def.js'
import { checkSupported } from '../model/ops/registry.js'
import type { Tensor, TensorInfo } from '../model/tensor.js'
import { constantInfo, hostTensor, sameDims } from '../model/values.js'
import type { ExecutionPlan, ResidentWrite } from '../plan/execution-plan.js'
import { buildProgram, type BuiltProgram } from '../plan/program-builder.js'
import { checkCommon, checkInteger, checkOptionNames } from '../validate.js'
import { ConstantStore } from './constant-store.js'
import { EngineBase, opTimings, type Computed, type EngineStats } from './engine-base.js'
import type { AppliedPlan } from './executor.js'
import { foldNative } from './fold-native.js'
import { BucketPlans, type BucketHost, type BucketStats, type RunnablePlan } from './bucket-plans.js'
import { checkDimRanges } from './dim-ranges.js'
import { outputArrays } from './output-arrays.js'
import { runStages } from './data-dims.js'
import { prepackShape } from './prepack.js'
import { binding } from '../native/binding.js'

export interface OpenOptions {
  /** Threads for compute (OpenMP). Default: available cores, at most 4. */
  readonly threads?: number
  /** File reader: io_uring when available ('auto'), or force 'uring' / 'pread'. */
  readonly io?: 'auto' | 'uring' | 'pread'
  /**
   * Input shapes whose programs are kept (least recently used are dropped), and as many plans of shapes
   * planned on their own. Default 16. A bucket shape's program is made again in about 0.2 ms (BERT-base);
   * each kept one holds its descriptor twice (about 180 KB for BERT-base), so memory stops growing once
   * this many shapes have been seen.
   */
  readonly maxPlans?: number
  /**
   * The values each symbolic input dim may take, inclusive: `{ seq_len: [1, 128] }`. Every shape bucket of
   * the declared dims is planned at open, so the arena never grows; a value outside its range is a
   * ShapeError. Undeclared symbolic dims are bucketed by powers of two as they come.
   */
  readonly dims?: Readonly<Record<string, readonly [number, number]>>
  /** Bucket ceilings per declared dim, increasing, the last its max (default: powers of two, then the max). */
  readonly buckets?: Readonly<Record<string, readonly number[]>>
}

export interface OnnxEngineStats extends EngineStats {
  readonly persistentBytes: number
  readonly activationBytes: number
  /** Plans made: one per shape bucket, and one per shape planned on its own. */
  readonly plans: number
  /** Shape buckets planned, how many run through a template, and the shape programs kept. */
  readonly buckets: BucketStats
}

type CachedPlan = RunnablePlan

/** Whether the tensors have the dims of `dims`, tensor by tensor. */
function haveDims(tensors: readonly Tensor[], dims: ReadonlyArray<readonly number[]>): boolean {
  return tensors.length === dims.length && tensors.every((t, i) => sameDims(t.dims, dims[i]!))
}

const activationAlignment = 4096

/**
 * In a shape bucket's passes, values computed from the input shapes fold to constants only up to this
 * size (position ids, masks of a few KB); larger ones run as ops, so that a new shape's constants are cheap.
 */
const shapeConstantBytes = 16 * 1024

/** Initializers of at least this many bytes are detached from the mapped model file after the first plan. */
const detachBytes = 64 * 1024

/**
 * The model file mapped, not copied: initializers are views of it until they are written to the arena.
 * Each mapping made is added to `into`, to be released once the graph lets go of it.
 */
function mapModelFile(into: ArrayBuffer[]): (path: string) => Uint8Array {
  return (path) => {
    const mapped = binding().mapFile(path)
    into.push(mapped)
    return Buffer.from(mapped)
  }
}

export class Engine extends EngineBase {
  readonly kind = 'onnx' as const
  private readonly constants = new ConstantStore()
  private readonly foldCache = new Map<string, ValueInfo[]>()
  private readonly plans = new Map<string, CachedPlan>()
  /**
   * The plan of the previous call and its input dims: a server calls with one shape again and again,
   * and finding the plan then takes a comparison instead of building its key (every call's JS runs
   * with caches the run before just emptied; node dist/bench/models/call-overhead.js).
   */
  private last: { readonly dims: ReadonlyArray<readonly number[]>; readonly entry: CachedPlan } | undefined
  private activationBytes = 0
  /** Graph inputs whose contents shape the plan (shape, pads, scales fed as inputs): part of the plan key. */
  private readonly valueInputs = new Set<string>()

  private buckets: BucketPlans | undefined
  /** The mapped model file, until the first plan has its weights in the arena (detachFromMapping). */
  private readonly mappings: ArrayBuffer[] = []

  private constructor(
    private graph: Graph,
    /** The model file (absolute): initializers detached from its mapping read their ranges from it. */
    private readonly path: string,
    private readonly maxPlans: number,
    outputs: readonly TensorInfo[],
    session: { threads: number; io: 'auto' | 'uring' | 'pread' },
  ) {
    super(graph.inputs, outputs, session)
  }

  /** Opens an ONNX model: import, fusion, symbolic shape inference, constant folding. */
  static async open(path: string, options: OpenOptions = {}): Promise<Engine> {
    const o = checkOptionNames(options, 'onnx', path)
    const common = checkCommon(o)
    const maxPlans = checkInteger(o, 'maxPlans', 1, Number.MAX_SAFE_INTEGER, 16, 'a positive integer')
    const file = resolve(path)
    const mappings: ArrayBuffer[] = []
    const source = await loadOnnx(file, mapModelFile(mappings))
    checkSupported(source)
    const inputs = new Map<string, ValueInfo>()
    for (const d of source.inputs) if (d.dims !== undefined) inputs.set(d.name, { dtype: d.dtype, dims: d.dims })
    const foldCache = new Map<string, ValueInfo[]>()
    const infer = symbolicShapes(inputs, foldNative, foldCache)
    const { graph, symbolic } = fuseGraph(source, inputs, (g) => {
      try {
        return infer(g)
      } catch (err) {
        // Shapes that depend on input contents are planned per infer() call; anything else is fatal.
        if (err instanceof ValueNeededError) return undefined
        throw err
      }
    })
    const outputs = graph.outputs.map((d) => ({ name: d.name, dtype: symbolic?.values.get(d.name)?.dtype ?? d.dtype, dims: symbolic?.values.get(d.name)?.dims ?? d.dims }))
    const engine = new Engine(graph, file, maxPlans, outputs, common)
    engine.mappings.push(...mappings)
    for (const [k, v] of foldCache) engine.foldCache.set(k, v)
    const ranges = checkDimRanges(o.dims, o.buckets, graph)
    if (symbolic !== undefined && (graph.inputs.some((d) => d.dims?.some((x) => typeof x === 'string')) || symbolic.dataDims.length > 0)) {
      engine.buckets = new BucketPlans(engine.bucketHost(), symbolic, ranges, maxPlans)
      try {
        await engine.buckets.planDeclared()
      } catch (err) {
        await engine.close()
        throw err
      }
    } else if (ranges.size > 0) {
      // checkDimRanges accepted the names, so the inputs have symbolic dims: it is their shapes that
      // depend on input contents, which every call then plans for itself.
      throw new OptionError(['dims'], `dims: ${path}'s shapes depend on the contents of its inputs, so it is planned per call and its dims cannot be declared; open it without dims`)
    }
    return engine
  }

  /** What the shape buckets use of the engine. */
  private bucketHost(): BucketHost {
    const engine = this
    return {
      get graph(): Graph {
        return engine.graph
      },
      fold: foldNative,
      foldCache: this.foldCache,
      inferAt: (dims, foldNodes, ceilingInputs, dataDims) =>
        inferGraph(this.graph, new Map(this.graph.inputs.map((d, i) => [d.name, { dtype: d.dtype, dims: dims[i]!.slice() }])), {
          concrete: true,
          fold: foldNative,
          foldCache: this.foldCache,
          ...(foldNodes === undefined ? { maxFoldBytes: shapeConstantBytes } : { foldNodes }),
          ...(ceilingInputs === undefined ? {} : { ceilingInputs }),
          ...(dataDims === undefined ? {} : { dataDims }),
        }),
      applyPlan: async (inferred, signature, concats) => {
        const r = await this.applyPlan(inferred, signature, concats)
        this.detachFromMapping()
        return r
      },
      executor: () => this.executor('infer'),
      placedConstant: (inferred, name, v, p) => this.constants.get(this.constantKey(inferred, name, v, '', p)) ?? { offset: -1, dtype: v.dtype, dims: v.dims as number[] },
    }
  }

  /**
   * Once a plan has put the weights into the arena, the large initializers that are views of the mapped
   * model file (TensorData.bytes) become references to their byte ranges of the file (ExternalTensor):
   * the graph lets go of the mapping, and a later plan that needs one of them again reads it with
   * pread, where a file changed or truncated since open is an IOError instead of a fault inside the
   * mapping. Small ones (shape-feeding constants whose values shape inference reads) become copies, so
   * that nothing holds a view of the mapping any more and it is unmapped: its pages (as large as the
   * model) no longer count in the process's RSS.
   */
  private detachFromMapping(): void {
    let initializers: Map<string, TensorData | ExternalTensor> | undefined
    for (const [name, t] of this.graph.initializers) {
      if (isExternal(t) || t.bytes === undefined) continue
      initializers ??= new Map(this.graph.initializers)
      initializers.set(name, this.detached(t))
    }
    if (initializers !== undefined) this.graph = { ...this.graph, initializers }
    // Folded values that are initializers passed through (a Reshape of a weight) hold the same views.
    for (const [node, outs] of this.foldCache) {
      if (!outs.some((v) => v.tensor !== undefined && !isExternal(v.tensor) && v.tensor.bytes !== undefined)) continue
      this.foldCache.set(
        node,
        outs.map((v) => (v.tensor === undefined || isExternal(v.tensor) || v.tensor.bytes === undefined ? v : constantInfo(this.detached(v.tensor)))),
      )
    }
    // Nothing reads the mapping any more: its pages leave the process now, not at some later collection
    // (a view missed above would read as empty, never as freed memory).
    for (const m of this.mappings.splice(0)) binding().unmapFile(m)
  }

  /** A tensor that is a view of the mapped model file, as a range of the file (large) or a copy (small). */
  private detached(t: TensorData): TensorData | ExternalTensor {
    const bytes = t.bytes!
    if (bytes.byteLength < detachBytes) return { dtype: t.dtype, dims: t.dims, data: t.data } // data: an aligned copy
    return { dtype: t.dtype, dims: t.dims as number[], path: this.path, offset: bytes.byteOffset, length: bytes.byteLength }
  }

  stats(): OnnxEngineStats {
    const buckets = this.buckets?.stats() ?? { buckets: 0, templated: 0, shapePrograms: 0 }
    return { ...this.sessionStats(), persistentBytes: this.constants.bytes, activationBytes: this.activationBytes, plans: this.plans.size + buckets.buckets, buckets }
  }

  protected async compute(tensors: Tensor[], profile: boolean): Promise<Computed> {
    if (this.buckets?.hasDataDims === true) return this.computeInStages(tensors, profile)
    const { applied, built, inputIndex } = await this.planFor(tensors)
    const { outputs, buffers } = outputArrays(built.outputs, (name) => tensors[this.graph.inputs.findIndex((d) => d.name === name)]!)
    const inputs = built.inputs.map((i, k): [number, ArrayBufferView] => [i.tensor, tensors[inputIndex[k]!]!.data])
    const r = await this.executor('infer').run(applied, inputs, buffers, { profile })
    return r.opMs === undefined ? { outputs } : { outputs, ops: opTimings(built, r.opMs), run: { plan: applied.plan, report: r } }
  }

  /**
   * A model with data-dependent sizes (data-dims.ts): the stages up to its last such op, each reading
   * the size its op wrote, then the rest of the ops with the outputs, all in the bucket's plan.
   */
  private async computeInStages(tensors: Tensor[], profile: boolean): Promise<Computed> {
    const x = this.executor('infer')
    const inputs = (p: CachedPlan): Array<[number, ArrayBufferView]> => p.built.inputs.map((i, k) => [i.tensor, tensors[p.inputIndex[k]!]!.data])
    const stages = await runStages((sizes) => this.stagePlan(tensors, sizes), x, inputs, profile)
    const { plan, begin } = stages
    const { outputs, buffers } = outputArrays(plan.built.outputs, (name) => tensors[this.graph.inputs.findIndex((d) => d.name === name)]!)
    const r = await x.run(plan.applied, begin === 0 ? inputs(plan) : [], buffers, { profile, opBegin: begin, opEnd: plan.built.opNodes.length })
    if (r.opMs === undefined) return { outputs }
    const opMs = Float64Array.from([...stages.opMs, ...r.opMs])
    return { outputs, ops: opTimings(plan.built, opMs), run: { plan: plan.applied.plan, report: { opMs } } }
  }

  /** The program of these inputs with the data-dependent sizes read so far (the rest at their bound). */
  private async stagePlan(tensors: Tensor[], sizes: ReadonlyMap<string, number>): Promise<CachedPlan> {
    const p = await this.buckets!.planFor(tensors, sizes)
    if (p !== undefined) return p
    const node = this.graph.nodes.find((n) => n.name === this.buckets!.dataDimNodes()[0])
    throw new UnsupportedOperatorError(
      node?.name ?? '',
      node?.opType ?? '',
      this.graph.opset,
      `its output's size depends on the data, and the plan made at that size's upper bound could not be reused at the actual sizes (${this.buckets!.reasonFor(tensors)}); please report the model`,
    )
  }

  protected async planOf(tensors: Tensor[]): Promise<ExecutionPlan> {
    return (await this.planFor(tensors)).applied.plan
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
    const bucketed = this.buckets !== undefined && this.valueInputs.size === 0 ? await this.buckets.planFor(tensors) : undefined
    const entry = bucketed ?? (await this.findPlan(tensors))
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
    const { applied, built } = await this.applyPlan(inferred, key)
    this.detachFromMapping()
    const entry = { applied, built, inputIndex: built.inputs.map((i) => this.graph.inputs.findIndex((d) => d.name === i.name)) }
    this.plans.set(key, entry)
    if (this.plans.size > this.maxPlans) {
      const [oldKey, old] = this.plans.entries().next().value as [string, CachedPlan]
      this.plans.delete(oldKey)
      if (this.last?.entry === old) this.last = undefined
      this.executor('infer').remove(old.applied)
    }
    return entry
  }

  /**
   * Plans one signature and applies it: its new constants go after those placed before, the activation
   * region after all of them, sized for the largest plan so far. Every cached plan then runs with the
   * activation region where it is now.
   */
  private async applyPlan(inferred: InferredGraph, signature: string, concatsInPlace = true): Promise<{ applied: AppliedPlan; built: BuiltProgram }> {
    const keepBytes = this.constants.bytes
    const resident = this.placeConstants(inferred, signature)
    // A model with data-dependent sizes runs in stages: its outputs are copied out of the arena at the end.
    const outputsInPlace = inferred.dataDims.length === 0
    const built = buildProgram(this.graph, inferred, (name, v, p) => this.constants.get(this.constantKey(inferred, name, v, signature, p))!, { outputsInPlace, concatsInPlace })
    for (const o of built.outputs) if (o.source.kind === 'constant') void o.source.data.data // a copy of the file's bytes, made now
    const activationBase = alignUp(this.constants.bytes, activationAlignment)
    this.activationBytes = Math.max(this.activationBytes, built.activationBytes)
    const x = this.executor('infer')
    const arenaBytes = Math.max(x.session.stats().arenaBytes, activationBase + this.activationBytes)
    const plan: ExecutionPlan = {
      ...built,
      arenaBytes,
      keepBytes,
      activationBase,
      resident,
      regions: [
        { name: 'constants', offset: 0, bytes: this.constants.bytes },
        { name: 'activations', offset: activationBase, bytes: arenaBytes - activationBase },
      ],
      buffers: [...this.constants.buffers(built.opNodes.length), ...built.buffers],
    }
    // Its resident writes are done: the plan kept with them would keep their bytes (views of the mapped
    // model file) alive.
    const applied = await x.apply(plan).then((a) => ({ ...a, plan: { ...a.plan, resident: [] } }))
    for (const e of this.plans.values()) e.applied = { ...e.applied, plan: { ...e.applied.plan, activationBase } }
    for (const e of this.buckets?.applied() ?? []) e.applied = { ...e.applied, plan: { ...e.applied.plan, activationBase } }
    return { applied, built }
  }

  private constantKey(inferred: InferredGraph, name: string, v: ValueInfo, signature: string, p?: Prepack): string {
    const base = inferred.staticValues.has(name) ? name : `${name}@${signature}:${v.dims.join('x')}`
    return p === undefined ? base : base + prepackKey(p)
  }

  /** Places every constant the kernels read (transformed where they ask for it) not placed yet; returns their writes. */
  private placeConstants(inferred: InferredGraph, signature: string): ResidentWrite[] {
    const writes: ResidentWrite[] = []
    const consider = (name: string, node: string, p?: Prepack): void => {
      const v = inferred.values.get(name)
      if (v === undefined || (v.tensor === undefined && hostTensor(v) === undefined)) return
      const key = this.constantKey(inferred, name, v, signature, p)
      if (this.constants.get(key) !== undefined) return
      if (p !== undefined) {
        // Transformed by the executor's write batch, from the file's bytes straight into the arena.
        const weight = constantHost(v)
        const out = prepackShape(weight, p, node)
        const offset = this.constants.reserve(key, out.dtype, out.dims, numel(out.dims) * dtypeBytes(out.dtype)).offset
        writes.push({ kind: 'prepack', offset, transform: p.transform, ints: p.ints, weight: { dtype: weight.dtype, dims: weight.dims, bytes: tensorBytes(weight) } })
        return
      }
      const offset = this.constants.reserve(key, v.dtype, v.dims as number[], valueBytes(v)).offset
      const t = v.tensor !== undefined && isExternal(v.tensor) ? v.tensor : undefined
      if (t !== undefined) writes.push({ kind: 'file', path: t.path, ranges: new Float64Array([t.offset, t.length, offset]), mode: 'buffered' })
      else writes.push({ kind: 'data', offset, data: tensorBytes(hostTensor(v) as TensorData) })
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
    return writes
  }
}
