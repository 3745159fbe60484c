// SPDX-License-Identifier: Apache-2.0
// Shape buckets for an ONNX model with symbolic input dims (Nimble; lib/plan/dynamic/). Each bucket gets
// one plan, made once at its ceiling (shape inference, constants, memory plan, program) and applied to
// the engine's arena; every input shape in the bucket then runs that plan's offsets on its actual sizes,
// through the bucket's program template. A new shape in a seen bucket costs the template's evaluation
// and one native program, never planning or memory.
//
// A bucket whose template does not reproduce the exactly built program at its probe shapes (an op whose
// words depend on the shape, a shape function the template cannot evaluate) keeps `template` undefined
// with the reason, and the engine plans such shapes one by one as before.
import { FlexpipeError, ShapeError } from '../errors.js'
import type { Dim, Graph, ValueInfo } from '../model/ir.js'
import type { FoldFn, InferOptions, InferredGraph } from '../model/infer-graph.js'
import { inferGraph } from '../model/infer-graph.js'
import type { Tensor } from '../model/tensor.js'
import { hostTensor } from '../model/values.js'
import { tensorBytes } from '../model/ir.js'
import type { ExecutionPlan } from '../plan/execution-plan.js'
import { buildProgram, maxRank, type BuiltProgram, type PlacedConstant } from '../plan/program-builder.js'
import type { Prepack } from '../model/ops/op-def.js'
import { compileDim, DimExprError, type DimBindings, type DimFn } from '../plan/dynamic/dim-expr.js'
import { allBuckets, bucketOf, bucketProbes, type DimRange, type ShapeBucket } from '../plan/dynamic/shape-buckets.js'
import { instantiate, makeTemplate, outputsAt, templateMismatch, type ShapeTemplate } from '../plan/dynamic/shape-template.js'
import { coneOf } from '../plan/dynamic/graph-cone.js'
import type { AppliedPlan, Executor } from './executor.js'
import { fromNative } from './native-errors.js'

/** A plan the engine runs: applied to the session, with the program's I/O. */
export interface RunnablePlan {
  applied: AppliedPlan
  readonly built: BuiltProgram
  readonly inputIndex: readonly number[]
  /** Set for a shape of a bucket: its shape constants must be in the arena before it runs. */
  readonly bucket?: BucketPlan
  readonly shapeKey?: string
  /** The shape constants' bytes for this shape (small: only values of a few KB fold, engine.ts shapeConstantBytes), in the template's order. */
  readonly constants?: readonly Uint8Array[]
}

/** A data-dependent size of a bucket's programs (data-dims.ts): its symbol, the op that sizes it, and where that op writes the size. */
export interface DataDimStage {
  readonly symbol: string
  /** The op's index in the bucket's programs (every shape's program has the ceiling's ops). */
  readonly op: number
  /** Where the op writes the size (an int64), from the activation base. */
  readonly countOffset: number
}

export interface BucketPlan {
  readonly bucket: ShapeBucket
  /** The plan at the ceiling; absent when the model cannot be planned there (its shapes are planned alone). */
  applied?: AppliedPlan
  readonly built?: BuiltProgram
  readonly inputIndex?: readonly number[]
  readonly template?: ShapeTemplate
  /** Why the bucket has no template (its shapes are planned one by one). */
  readonly reason?: string
  /** Why its ceiling could not be planned. */
  readonly error?: FlexpipeError
  /** The shape whose shape constants are in the bucket's slots now. */
  constantsFor?: string
  /** The shape-dependent nodes the ceiling's pass folded: every pass of the bucket folds these. */
  readonly foldNodes?: ReadonlySet<string>
  /** The model's data-dependent dims in op order (data-dims.ts); empty for a model without any. */
  readonly stages?: readonly DataDimStage[]
}

/** What the engine lends the buckets: its graph, its inference and its planner. */
export interface BucketHost {
  readonly graph: Graph
  readonly fold: FoldFn
  readonly foldCache: Map<string, ValueInfo[]>
  /**
   * Concrete shape inference at the given input dims (every input in graph order). Of the nodes that
   * depend on the shapes, small ones fold (maxFoldBytes), or with `foldNodes` exactly those; with
   * `ceilingInputs`, kernels choose as at the bucket's ceiling (OpContext.ceiling).
   */
  inferAt(dims: ReadonlyArray<readonly number[]>, foldNodes?: ReadonlySet<string>, ceilingInputs?: InferOptions['ceilingInputs'], dataDims?: ReadonlyMap<string, number>): InferredGraph
  /**
   * Places the constants of a concrete pass, builds its program and applies it to the session (then lets
   * the large initializers go from the mapped model file; large shape-dependent values do not fold, so
   * passes before and after fold the same way).
   */
  applyPlan(inferred: InferredGraph, signature: string, concatsInPlace: boolean): Promise<{ applied: AppliedPlan; built: BuiltProgram }>
  executor(): Executor
  /**
   * Where a probe's constants are: as placed for the ceiling (keyed as the engine keys them), and for a
   * constant not placed (a shape constant) its own dims at offset -1.
   */
  placedConstant(inferred: InferredGraph, name: string, v: ValueInfo, p?: Prepack): PlacedConstant
}

export interface BucketStats {
  readonly buckets: number
  readonly templated: number
  readonly shapePrograms: number
}

export class BucketPlans {
  private readonly buckets = new Map<string, BucketPlan>()
  private readonly programs = new Map<string, RunnablePlan>()
  /** The graph cut down to what the shape constants depend on, per set of shape constants. */
  private readonly cones = new Map<string, { readonly from: Graph; readonly graph: Graph }>()
  /** The symbols of the templates: the input dims', then the data-dependent dims'. */
  private readonly symbols: string[]
  private readonly inputDims: string[]
  /** The model's data-dependent dims (InferredGraph.dataDims), each bound a function of the input dims. */
  private readonly dataDims: ReadonlyArray<{ readonly symbol: string; readonly node: string; readonly bound: DimFn }>
  /** Per graph input, per dim: the symbol it binds, or undefined for a fixed dim. */
  private readonly inputSymbols: ReadonlyArray<ReadonlyArray<string | undefined>>

  /** The symbolic dims of every value and of every step's outputs (the shape functions). */
  private readonly valueDims = new Map<string, readonly Dim[]>()
  private readonly stepDims = new Map<string, ReadonlyArray<readonly Dim[]>>()

  constructor(
    private readonly host: BucketHost,
    /**
     * The symbolic pass of the graph: only its dims are kept (its values hold views of the mapped model
     * file, which must be let go once the weights are in the arena).
     */
    symbolic: InferredGraph,
    private readonly ranges: ReadonlyMap<string, DimRange>,
    private readonly maxPrograms: number,
  ) {
    for (const [name, v] of symbolic.values) this.valueDims.set(name, v.dims)
    for (const step of symbolic.steps) this.stepDims.set(step.node.name, step.outputs.map((o) => o.dims))
    this.inputSymbols = host.graph.inputs.map((d) => (d.dims ?? []).map((x) => (typeof x === 'string' ? x : undefined)))
    this.inputDims = [...new Set(this.inputSymbols.flat().filter((s): s is string => s !== undefined))]
    // a bound is a function of the input dims and of the sizes before it (TopK of what NonZero kept)
    this.symbols = [...this.inputDims, ...symbolic.dataDims.map((d) => d.symbol)]
    this.dataDims = symbolic.dataDims.map((d) => ({ symbol: d.symbol, node: d.node, bound: compileDim(d.bound, this.symbols) }))
  }

  /** Whether the model has sizes that depend on the data: it runs in stages (data-dims.ts). */
  get hasDataDims(): boolean {
    return this.dataDims.length > 0
  }

  /** The nodes whose outputs have data-dependent sizes, in graph order. */
  dataDimNodes(): string[] {
    return this.dataDims.map((d) => d.node)
  }

  /** Why the bucket of these inputs has no template ('' when it has one or is not planned). */
  reasonFor(tensors: readonly Tensor[]): string {
    return this.buckets.get(bucketOf(this.bind(tensors), this.ranges, (dim) => this.where(dim)).key)?.reason ?? ''
  }

  /** Input dims and data-dependent sizes: those in `sizes`, the others at their bound (given the dims and the sizes before). */
  private withSizes(inputs: DimBindings, sizes: ReadonlyMap<string, number>): Map<string, number> {
    const b = new Map(inputs)
    for (const d of this.dataDims) b.set(d.symbol, sizes.get(d.symbol) ?? d.bound(b))
    return b
  }

  /** The data-dependent sizes of full bindings, as inferGraph takes them (none: a model without any). */
  private sizesOf(b: DimBindings): Map<string, number> | undefined {
    if (this.dataDims.length === 0) return undefined
    return new Map(this.dataDims.map((d) => [d.symbol, b.get(d.symbol)!]))
  }

  stats(): BucketStats {
    return { buckets: this.buckets.size, templated: [...this.buckets.values()].filter((b) => b.template !== undefined).length, shapePrograms: this.programs.size }
  }

  /** Every bucket of the declared dims, planned now (largest first), so that the arena is sized at open. */
  async planDeclared(): Promise<void> {
    if (!this.inputDims.every((s) => this.ranges.has(s))) return
    for (const b of allBuckets(this.ranges)) {
      if (this.buckets.has(b.key)) continue
      const plan = await this.planBucket(b)
      if (plan.error !== undefined) {
        const at = [...b.hi].map(([n, v]) => `${n} = ${v}`).join(', ')
        throw new ShapeError(`dims: the model cannot run at ${at}, inside the declared ranges (${plan.error.message}); declare ranges the model accepts`)
      }
      this.buckets.set(b.key, plan)
    }
  }

  /** Every plan applied to the session (the engine moves their activation region). */
  *applied(): Iterable<{ applied: AppliedPlan }> {
    for (const b of this.buckets.values()) if (b.applied !== undefined) yield b as { applied: AppliedPlan }
    yield* this.programs.values()
  }

  /**
   * The plan for these inputs, or undefined when their bucket has no template (the engine plans the shape
   * itself). Throws ShapeError for a dim outside its declared range. `sizes`: data-dependent sizes read
   * so far (the others at their bound).
   */
  async planFor(tensors: readonly Tensor[], sizes: ReadonlyMap<string, number> = new Map()): Promise<RunnablePlan | undefined> {
    const inputs = this.bind(tensors)
    const bindings = this.dataDims.length === 0 ? inputs : this.withSizes(inputs, sizes)
    const shapeKey = [...bindings.values()].join('x')
    let p = this.programs.get(shapeKey)
    if (p !== undefined) {
      this.programs.delete(shapeKey)
      this.programs.set(shapeKey, p) // most recently used last
    } else {
      const bucket = bucketOf(inputs, this.ranges, (dim) => this.where(dim))
      let b = this.buckets.get(bucket.key)
      if (b === undefined) this.buckets.set(bucket.key, (b = await this.planBucket(bucket)))
      if (b.template === undefined) return undefined
      try {
        p = this.shapeProgram(b, b.template, bindings, shapeKey)
      } catch (err) {
        if (err instanceof DimExprError) return undefined // a tensor outgrows its ceiling here: planned alone
        throw err
      }
      this.programs.set(shapeKey, p)
      b.constantsFor = undefined
      if (this.programs.size > this.maxPrograms) {
        const [oldKey, old] = this.programs.entries().next().value as [string, RunnablePlan]
        this.programs.delete(oldKey)
        this.host.executor().remove(old.applied)
      }
    }
    this.writeShapeConstants(p)
    return p
  }

  /** A bucket shape's constants, written into the bucket's slots unless they hold this shape's already. */
  writeShapeConstants(p: RunnablePlan): void {
    const b = p.bucket
    if (b === undefined || p.constants === undefined || p.constants.length === 0 || b.constantsFor === p.shapeKey) return
    const session = this.host.executor().session
    b.template!.shapeConstants.forEach((c, k) => session.write(c.offset, p.constants![k]!))
    b.constantsFor = p.shapeKey
  }

  private where(dim: string): string {
    const i = this.inputSymbols.findIndex((ds) => ds.includes(dim))
    return `input '${this.host.graph.inputs[i]?.name}' dim ${this.inputSymbols[i]?.indexOf(dim)}`
  }

  private bind(tensors: readonly Tensor[]): Map<string, number> {
    const b = new Map<string, number>()
    this.inputSymbols.forEach((ds, i) => ds.forEach((s, j) => s !== undefined && b.set(s, tensors[i]!.dims[j]!)))
    return b
  }

  private dimsAt(b: DimBindings): number[][] {
    return this.host.graph.inputs.map((d, i) => (d.dims ?? []).map((x, j) => (typeof x === 'number' ? x : b.get(this.inputSymbols[i]![j]!)!)))
  }

  /**
   * Plans a bucket at its ceiling and makes its template, checked against the exact program at the
   * bucket's probe shapes.
   */
  private async planBucket(bucket: ShapeBucket): Promise<BucketPlan> {
    let inferred: InferredGraph
    const ceiling = this.withSizes(bucket.hi, new Map())
    try {
      inferred = this.host.inferAt(this.dimsAt(bucket.hi), undefined, undefined, this.sizesOf(ceiling))
    } catch (err) {
      // The model refuses the ceiling (a shape constraint): its shapes are planned one by one, and a
      // declared range that reaches it is refused at open (planDeclared).
      if (err instanceof FlexpipeError) return { bucket, reason: `the ceiling cannot be planned: ${err.message}`, error: err }
      throw err
    }
    const fixed = [...bucket.lo].every(([n, v]) => bucket.hi.get(n) === v) && this.dataDims.length === 0
    const { applied, built } = await this.host.applyPlan(inferred, `bucket:${bucket.key}`, fixed)
    const inputIndex = built.inputs.map((i) => this.host.graph.inputs.findIndex((d) => d.name === i.name))
    const foldNodes = inferred.foldedNodes
    const ceilingInputs = new Map(inferred.steps.map((step) => [step.node.name, step.inputs]))
    const plan = { bucket, applied, built, inputIndex, foldNodes }
    try {
      const stages = this.stagesOf(built)
      if (fixed) return { ...plan, stages, template: this.templateOf(built, bucket.hi, new Set()) }
      const constants = shapeConstantNames(inferred)
      const template = this.templateOf(built, ceiling, constants)
      for (const probe of this.probesOf(bucket)) {
        const mismatch = this.probe(template, probe, constants, foldNodes, ceilingInputs)
        if (mismatch !== undefined) return { ...plan, reason: `at ${[...probe].map(([n, v]) => `${n}=${v}`).join(', ')}: ${mismatch}` }
      }
      return { ...plan, stages, template }
    } catch (err) {
      if (err instanceof DimExprError || err instanceof FlexpipeError) return { ...plan, reason: err.message }
      throw err
    }
  }

  /**
   * The probe shapes of a bucket (bucketProbes), with the data-dependent sizes at their bound; and at the
   * ceiling's input dims, every size at 0, 1, about half its bound and one below it.
   */
  private probesOf(bucket: ShapeBucket): DimBindings[] {
    const probes: DimBindings[] = bucketProbes(bucket).map((p) => this.withSizes(p, new Map()))
    if (this.dataDims.length === 0) return probes
    for (const at of [(_: number) => 0, (_: number) => 1, (b: number) => Math.floor(b / 2) + 1, (b: number) => b - 1]) {
      const b = new Map(bucket.hi)
      for (const d of this.dataDims) b.set(d.symbol, Math.max(0, Math.min(d.bound(b), at(d.bound(b)))))
      probes.push(b)
    }
    const byKey = new Map(probes.map((p) => [[...p.values()].join(','), p]))
    return [...byKey.values()]
  }

  /** Where each data-dependent op of a bucket's programs is and writes its size (its op's last output). */
  private stagesOf(built: BuiltProgram): DataDimStage[] {
    const stages = this.dataDims.map((d) => {
      const op = built.opNodes.indexOf(d.node)
      let slot = -1
      let index = -1
      built.slotOrigins.forEach((o, i) => {
        if (o.kind === 'step-output' && o.node === d.node && o.index > index) [slot, index] = [i, o.index]
      })
      const at = 3 + slot * (4 + maxRank)
      if (op < 0 || slot < 0 || built.program[at] !== 1) throw new DimExprError(`the size of '${d.node}''s output is not written by an op of the program`)
      return { symbol: d.symbol, op, countOffset: built.program[at + 1]! }
    })
    return stages.sort((a, b) => a.op - b.op)
  }

  private templateOf(built: BuiltProgram, ceiling: DimBindings, constants: ReadonlySet<string>): ShapeTemplate {
    return makeTemplate(built, ceiling, this.symbols, (o) => (o.kind === 'value' ? this.valueDims.get(o.name) : o.kind === 'step-output' ? this.stepDims.get(o.node)?.[o.index] : undefined), constants)
  }

  /** Where the template at a probe shape differs from the program built exactly for it (undefined: nowhere). */
  private probe(t: ShapeTemplate, at: DimBindings, constants: ReadonlySet<string>, foldNodes: ReadonlySet<string>, ceilingInputs: InferOptions['ceilingInputs']): string | undefined {
    const inferred = this.host.inferAt(this.dimsAt(at), foldNodes, ceilingInputs, this.sizesOf(at))
    const now = shapeConstantNames(inferred)
    if (now.size !== constants.size || [...now].some((n) => !constants.has(n))) return `the values folded to constants are ${[...now].join(', ')}, at the ceiling ${[...constants].join(', ')}`
    const values = this.shapeConstants(at, [...constants], foldNodes)
    for (const name of constants) {
      const a = hostTensor(values.get(name)!)
      const b = hostTensor(inferred.values.get(name)!)
      if (a === undefined || b === undefined || !sameBytes(tensorBytes(a), tensorBytes(b))) return `shape constant '${name}' recomputes differently`
    }
    const exact = buildProgram(this.host.graph, inferred, (name, v, p) => this.host.placedConstant(inferred, name, v, p), { outputsInPlace: this.dataDims.length === 0, concatsInPlace: false })
    return templateMismatch(t, at, dimsOf(values), exact)
  }

  /** The program of one shape of a bucket. */
  private shapeProgram(b: BucketPlan, t: ShapeTemplate, bindings: DimBindings, shapeKey: string): RunnablePlan {
    const values = t.shapeConstants.length === 0 ? new Map<string, ValueInfo>() : this.shapeConstants(bindings, t.shapeConstants.map((c) => c.name), b.foldNodes!)
    const words = instantiate(t, bindings, dimsOf(values))
    const constants = t.shapeConstants.map((c) => tensorBytes(hostTensor(values.get(c.name)!)!))
    const outputs = outputsAt(t, bindings)
    const plan: ExecutionPlan = { ...b.applied!.plan, program: words, outputs }
    let program: number
    try {
      program = this.host.executor().session.addProgram(words)
    } catch (err) {
      throw fromNative(err)
    }
    const applied = { plan, program }
    return { applied, built: { ...b.built!, program: words, outputs }, inputIndex: b.inputIndex!, bucket: b, shapeKey, constants }
  }

  /**
   * The shape constants at these dims, computed by the shape functions of the nodes they depend on
   * (the cone of the graph above them), folded as the concrete pass folds them.
   */
  private shapeConstants(at: DimBindings, names: readonly string[], foldNodes: ReadonlySet<string>): Map<string, ValueInfo> {
    const key = names.join('\n')
    let cone = this.cones.get(key)
    if (cone === undefined || cone.from !== this.host.graph) this.cones.set(key, (cone = { from: this.host.graph, graph: coneOf(this.host.graph, names) }))
    const dims = this.dimsAt(at)
    const inputs = new Map<string, ValueInfo>(this.host.graph.inputs.map((d, i) => [d.name, { dtype: d.dtype, dims: dims[i]! }]))
    const sizes = this.sizesOf(at)
    const r = inferGraph(cone.graph, inputs, { concrete: true, fold: this.host.fold, foldCache: this.host.foldCache, foldNodes, ...(sizes === undefined ? {} : { dataDims: sizes }) })
    return new Map(names.map((n) => [n, r.values.get(n)!]))
  }
}

/** Values a concrete pass folded to constants that kernels read and that depend on the input shapes. */
function shapeConstantNames(inferred: InferredGraph): Set<string> {
  const out = new Set<string>()
  for (const step of inferred.steps) {
    step.kernel?.inputs.forEach((i) => {
      const name = i < 0 ? '' : (step.node.inputs[i] ?? '')
      const v = name === '' ? undefined : inferred.values.get(name)
      if (v !== undefined && (v.tensor !== undefined || hostTensor(v) !== undefined) && !inferred.staticValues.has(name)) out.add(name)
    })
  }
  return out
}

function dimsOf(values: ReadonlyMap<string, ValueInfo>): Map<string, readonly number[]> {
  return new Map([...values].map(([n, v]) => [n, v.dims as number[]]))
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0
}
