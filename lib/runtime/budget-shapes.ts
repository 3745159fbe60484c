// SPDX-License-Identifier: Apache-2.0
// The input shapes of a memory-budget package prepared for dim ranges (`flexpipe prepare --dim
// batch=1..8`; Nimble's buckets under FlexNN's budget). The budget plan (slicing, pins, loads, memory
// layout) is made once, at the ranges' ceiling, and sized the arena; every input shape in the ranges
// runs that plan on its actual sizes: the same layers with the same kernels and slices, every tensor at
// the place the ceiling plan gave it, the same loads in the same order. No memory is planned and none is
// added per shape.
//
// A shape's program comes from the ceiling's program template (lib/plan/dynamic/shape-template.ts): its
// tensors' dims evaluated from their symbolic shape functions, no shape inference and no program build.
// The template is made at open and used only if it equals, word for word, the program built exactly (the
// ceiling plan rebuilt at the shape's dims) at the range's floor and at probe points. Otherwise each new
// shape gets the exact build, compared with the ceiling's tensor by tensor (kind, lifetime, load, bytes
// no larger than the planned ones): a difference is a ShapeError naming the tensor, before any program
// runs. Values that depend on the input shapes and fold to resident constants (BERT's token-type
// embeddings expanded to the length) are recomputed per shape by their cone of the graph and written
// into their ceiling-sized places before the shape runs, when another shape's are there.
import { FlexpipeError, ShapeError } from '../errors.js'
import { bindInputDims, inputSymbols } from '../model/bind-input-dims.js'
import type { Dim, Graph, ValueInfo } from '../model/ir.js'
import { tensorBytes } from '../model/ir.js'
import { inferGraph, type FoldFn } from '../model/infer-graph.js'
import { hostTensor } from '../model/values.js'
import { coneOf } from '../plan/dynamic/graph-cone.js'
import { DimExprError } from '../plan/dynamic/dim-expr.js'
import { bucketProbes, defaultCeilings } from '../plan/dynamic/shape-buckets.js'
import { instantiate, makeTemplate, outputsAt, templateMismatch, type ShapeTemplate } from '../plan/dynamic/shape-template.js'
import type { Tensor } from '../model/tensor.js'
import { parseFormKey } from '../model/forms.js'
import type { BudgetPlan } from '../plan/budget/plan-budget.js'
import { ceilingOf, type CeilingModel, type PackageModel } from '../plan/budget/budget-model.js'
import { buildBudgetProgram, finishProgram, type BudgetProgram, type ConstantSource } from '../plan/budget/budget-program.js'
import { plannedBase, type TransformFn } from '../plan/budget/budget-execution.js'
import { programBytes } from '../plan/budget/budget-reserve.js'
import type { LayerChoice } from '../plan/budget/slicing.js'
import type { ExecutionPlan } from '../plan/execution-plan.js'
import type { AppliedPlan, Executor } from './executor.js'
import { fromNative } from './native-errors.js'

/** A declared range of a package's symbolic dim, inclusive. */
export type PackageDimRange = readonly [number, number]

/** The plan one input shape runs. */
export interface ShapeRun {
  readonly key: string
  readonly applied: AppliedPlan
  /** Resident constants that depend on the input shapes: written before the shape runs when not in place. */
  readonly writes: ReadonlyArray<{ readonly offset: number; readonly data: Uint8Array }>
}

/** The active budget plan, as the engine holds it. */
export interface ActiveBudgetPlan {
  readonly plan: BudgetPlan
  readonly applied: AppliedPlan
}

export class BudgetShapes {
  /**
   * The dims the active plan is made at: every range's max, or, when the memory budget cannot hold the
   * plan there, the largest bucket ceilings it can (values above them are refused).
   */
  ceiling: ReadonlyMap<string, number>
  /** Every range's max. */
  readonly top: ReadonlyMap<string, number>
  /** `ceiling` as a shape key. */
  private ceilingKey: string
  private readonly ceilings = new WeakMap<PackageModel, CeilingModel>()
  private readonly inputSymbols: ReadonlyArray<ReadonlyArray<string | undefined>>
  private readonly programs = new Map<string, ShapeRun>()
  /** The shape whose shape-dependent constants are in the arena now. */
  private constantsFor: string | undefined
  private ceilingRun: ShapeRun | undefined
  /** The plan the template (or the reason there is none) is for, and its program at the ceiling. */
  private templateOf: BudgetPlan | undefined
  private ceilingWords: Float64Array | undefined
  /** That plan's template, when it passed its probes; else why not. */
  private template: ShapeTemplate | undefined
  private templateReason = 'not made yet'
  /** Shape-dependent resident constants of the active plan: name, form, node, offset and bytes at the ceiling. */
  private shapeConstants: ReadonlyArray<{ readonly name: string; readonly form: string; readonly node: string; readonly offset: number; readonly bytes: number }> = []
  private cone: Graph | undefined
  private readonly foldCache = new Map<string, ValueInfo[]>()
  /** The symbolic dims of every value and unnamed node output of the package graph (the shape functions). */
  private symbolic: { values: Map<string, readonly Dim[]>; steps: Map<string, ReadonlyArray<readonly Dim[]>> } | undefined

  constructor(
    /** The package graph, its inputs with the symbolic dims. */
    private readonly graph: Graph,
    readonly ranges: ReadonlyMap<string, PackageDimRange>,
    /** The planner's model of the graph at these dims, made to match the plan's ceiling model. */
    private readonly modelAt: (dims: ReadonlyMap<string, number>, ceiling: CeilingModel) => PackageModel,
    private readonly transform: TransformFn,
    private readonly fold: FoldFn,
    /** false: every shape gets the exact build (tests of that path). */
    private readonly templates = true,
    private readonly maxPrograms = 16,
  ) {
    this.top = new Map([...ranges].map(([n, r]) => [n, r[1]]))
    this.ceiling = this.top
    this.ceilingKey = [...this.top.values()].join('x')
    this.inputSymbols = graph.inputs.map((d) => (d.dims ?? []).map((x) => (typeof x === 'string' ? x : undefined)))
  }

  /** The graph with its ranges' dims at `dims`. */
  graphAt(dims: ReadonlyMap<string, number>): Graph {
    return bindInputDims(this.graph, dims)
  }

  /**
   * The bucket ceilings below the ranges' top, largest first: every ranged dim steps down its powers of
   * two together (a dim that reaches its min stays there).
   */
  lowerCeilings(): Array<Map<string, number>> {
    const steps = [...this.ranges].map(([n, [lo, hi]]) => [n, defaultCeilings(lo, hi).slice(0, -1).reverse()] as const)
    const out: Array<Map<string, number>> = []
    const depth = Math.max(0, ...steps.map(([, cs]) => cs.length))
    for (let i = 0; i < depth; i++) out.push(new Map(steps.map(([n, cs]) => [n, cs[Math.min(i, cs.length - 1)] ?? this.ranges.get(n)![0]])))
    return out
  }

  /** `dim in min..max`, for messages. */
  describe(dims: ReadonlyMap<string, number> = this.ceiling): string {
    return [...dims].map(([n, v]) => `${n} = ${v}`).join(', ')
  }

  /** The dims of these (checked) inputs; ShapeError for a dim outside its range. */
  bind(tensors: readonly Tensor[]): Map<string, number> {
    const b = new Map<string, number>()
    this.inputSymbols.forEach((ds, i) =>
      ds.forEach((s, j) => {
        if (s === undefined || b.has(s)) return
        const v = tensors[i]!.dims[j]!
        const [lo, hi] = this.ranges.get(s)!
        if (v < lo || v > hi) {
          throw new ShapeError(`input '${this.graph.inputs[i]!.name}' dim ${j}: '${s}' is ${v}, outside the range ${lo}..${hi} this package was prepared for; prepare it with --dim ${s}=${Math.min(lo, v)}..${Math.max(hi, v)} to run it`)
        }
        b.set(s, v)
      }),
    )
    return b
  }

  /**
   * The plan of the shape `dims` under the active plan (made at the ceiling). Its resident constants
   * that depend on the shape are written by `prepare()` before the run.
   */
  runFor(dims: ReadonlyMap<string, number>, active: ActiveBudgetPlan, ceilingModel: PackageModel, x: Executor): ShapeRun {
    const key = [...dims.values()].join('x')
    if (key === this.ceilingKey) return (this.ceilingRun ??= { key, applied: active.applied, writes: this.shapeWrites(active.plan.build) })
    let run = this.programs.get(key)
    if (run !== undefined) {
      this.programs.delete(key)
      this.programs.set(key, run) // most recently used last
      return run
    }
    let plan: ExecutionPlan
    let writes: ShapeRun['writes']
    const t = this.templateOf === active.plan ? this.template : undefined
    if (t !== undefined) {
      const constants = this.constantsAt(dims)
      plan = { ...active.applied.plan, program: instantiate(t, dims, constants.dims), outputs: outputsAt(t, dims), resident: [] }
      writes = constants.writes
    } else {
      const build = this.buildAt(dims, active.plan, ceilingModel)
      plan = { ...active.applied.plan, program: finishProgram(build, active.plan.plan, plannedBase(active.plan)), inputs: build.inputs, outputs: build.outputs, opNodes: build.opNodes, opKinds: build.opKinds, resident: [] }
      writes = this.shapeWrites(build)
    }
    let program: number
    try {
      program = x.session.addProgram(plan.program)
    } catch (err) {
      throw fromNative(err)
    }
    run = { key, applied: { plan, program }, writes }
    this.programs.set(key, run)
    if (this.programs.size > this.maxPrograms) {
      const [oldKey, old] = this.programs.entries().next().value as [string, ShapeRun]
      this.programs.delete(oldKey)
      x.remove(old.applied)
    }
    return run
  }

  /** Writes a shape's shape-dependent constants unless they are in the arena already. */
  prepare(run: ShapeRun, x: Executor): void {
    if (this.constantsFor === run.key) return
    for (const w of run.writes) x.session.write(w.offset, w.data)
    this.constantsFor = run.key
  }

  /** Forgets every shape's program (a new plan is being applied; the first run writes its shape's constants). */
  reset(x: Executor): void {
    for (const run of this.programs.values()) x.remove(run.applied)
    this.programs.clear()
    this.ceilingRun = undefined
    this.constantsFor = undefined
  }

  get programCount(): number {
    return this.programs.size
  }

  /**
   * What the shape programs of the prepared plan take while kept, at most: each its words, its native
   * program and its shape constants (sized at the ceiling), for as many as are kept; 0 before a plan.
   */
  keptBytes(): number {
    const words = this.ceilingWords
    if (words === undefined) return 0
    const constants = this.shapeConstants.reduce((a, c) => a + c.bytes, 0)
    return (this.maxPrograms + 1) * (programBytes(words) + constants)
  }

  /** Whether shapes run from the active plan's template, and if not, why. */
  get templated(): { readonly templated: boolean; readonly reason?: string } {
    return this.template !== undefined ? { templated: true } : { templated: false, reason: this.templateReason }
  }

  /**
   * Makes the template of `plan` (before it is applied, so that what making it grows of the heap is
   * measured as part of opening) and checks it at the range's floor and probe points against the exact
   * build, and its shape constants against the cone's. Checks first that the floor builds like the
   * ceiling: a ShapeError when it does not, so the package is refused at open. Once per plan.
   */
  prepareFor(plan: BudgetPlan, ceilingModel: PackageModel, ceiling: ReadonlyMap<string, number>): void {
    if (this.templateOf === plan) return
    this.ceiling = ceiling
    this.ceilingKey = [...ceiling.values()].join('x')
    this.ceilingRun = undefined
    this.templateOf = plan
    this.template = undefined
    this.templateReason = 'not made'
    const program = finishProgram(plan.build, plan.plan, plannedBase(plan))
    this.ceilingWords = program
    const build = plan.build
    this.shapeConstants = build.resident.flatMap((r) => (this.isShapeConstant(r.source) ? [{ name: r.source.name, form: r.source.form, node: r.source.node, offset: r.offset, bytes: r.bytes }] : []))
    this.cone = coneOf(this.graph, [...new Set(this.shapeConstants.map((c) => c.name))])
    const lo = new Map([...this.ranges].map(([n, r]) => [n, r[0]]))
    const floor = this.buildAt(lo, plan, ceilingModel) // throws ShapeError when the plan does not cover the floor
    if (!this.templates) {
      this.templateReason = 'templates are off'
      return
    }
    try {
      const sym = this.symbolicDims()
      const source = { program, slotOrigins: build.slotOrigins, outputs: build.outputs }
      const names = new Set(this.shapeConstants.filter((c) => parseFormKey(c.form) === undefined).map((c) => c.name))
      const t = makeTemplate(source, this.ceiling, inputSymbols(this.graph), (o) => (o.kind === 'value' ? sym.values.get(o.name) : o.kind === 'step-output' ? sym.steps.get(o.node)?.[o.index] : undefined), names, true)
      for (const probe of bucketProbes({ key: '', lo, hi: this.ceiling })) {
        const exact = probe.size === lo.size && [...lo].every(([n, v]) => probe.get(n) === v) ? floor : this.buildAt(probe, plan, ceilingModel)
        const words = finishProgram(exact, plan.plan, plannedBase(plan))
        const constants = this.constantsAt(probe)
        const at = this.describe(probe)
        const mismatch = templateMismatch(t, probe, constants.dims, { program: words, slotOrigins: exact.slotOrigins })
        if (mismatch !== undefined) throw new DimExprError(`at ${at}: ${mismatch}`)
        const want = this.shapeWrites(exact)
        if (want.length !== constants.writes.length || want.some((w, i) => w.offset !== constants.writes[i]!.offset || Buffer.compare(w.data, constants.writes[i]!.data) !== 0)) throw new DimExprError(`at ${at}: the shape constants recompute differently`)
      }
      this.template = t
      this.templateReason = ''
    } catch (err) {
      if (!(err instanceof DimExprError || err instanceof FlexpipeError)) throw err
      this.templateReason = err.message
    }
  }

  /** The symbolic pass over the package graph (once): every value's dims as functions of the input dims. */
  private symbolicDims(): NonNullable<BudgetShapes['symbolic']> {
    if (this.symbolic === undefined) {
      const inputs = new Map<string, ValueInfo>(this.graph.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
      const r = inferGraph(this.graph, inputs, { concrete: false, fold: this.fold, foldCache: this.foldCache })
      this.symbolic = { values: new Map([...r.values].map(([n, v]) => [n, v.dims])), steps: new Map(r.steps.map((s) => [s.node.name, s.outputs.map((o) => o.dims)])) }
    }
    return this.symbolic
  }

  /** The shape constants at `dims`, by their cone: dims by name, and the bytes to write at each offset. */
  private constantsAt(dims: ReadonlyMap<string, number>): { dims: Map<string, readonly number[]>; writes: ShapeRun['writes'] } {
    const out = { dims: new Map<string, readonly number[]>(), writes: [] as Array<{ offset: number; data: Uint8Array }> }
    if (this.shapeConstants.length === 0) return out
    const g = bindInputDims(this.cone!, dims)
    const inputs = new Map<string, ValueInfo>(g.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
    const values = inferGraph(g, inputs, { concrete: true, fold: this.fold, foldCache: this.foldCache }).values
    for (const c of this.shapeConstants) {
      const host = hostTensor(values.get(c.name)!)
      if (host === undefined) throw new DimExprError(`shape constant '${c.name}' does not fold at ${this.describe(dims)}`)
      out.dims.set(c.name, host.dims)
      const form = parseFormKey(c.form)
      out.writes.push({ offset: c.offset, data: tensorBytes(form === undefined ? host : this.transform(host, form, c.node)) })
    }
    return out
  }

  /** The ceiling plan's program rebuilt at `dims`, checked against the ceiling's build. */
  private buildAt(dims: ReadonlyMap<string, number>, plan: BudgetPlan, ceilingModel: PackageModel): BudgetProgram {
    const at = this.describe(dims)
    let ceiling = this.ceilings.get(ceilingModel)
    if (ceiling === undefined) this.ceilings.set(ceilingModel, (ceiling = ceilingOf(ceilingModel)))
    const m = this.modelAt(dims, ceiling)
    const byNode = new Map(m.layers.map((l, i) => [l.step.node.name, i]))
    if (m.layers.length !== ceilingModel.layers.length) throw new ShapeError(`at ${at} the model has ${m.layers.length} layers, at the ceiling ${ceilingModel.layers.length}; prepare the package for this shape alone`)
    const choices: LayerChoice[] = ceilingModel.layers.map((cl, i) => {
      const c = plan.choices[i]!
      const o = cl.options[c.option]!
      const j = byNode.get(cl.step.node.name)
      const option = j === undefined ? -1 : m.layers[j]!.options.findIndex((p) => p.kernel === o.kernel && p.sliced?.form === o.sliced?.form)
      if (j !== i || option < 0) throw new ShapeError(`at ${at} node '${cl.step.node.name}' cannot run the kernel '${o.kernel}' the plan chose at the ceiling (${this.describe()}); prepare the package for a narrower range`)
      return { ...c, option }
    })
    const build = buildBudgetProgram({ ...m, choices, residentLayout: { constants: plan.build.resident, bytes: plan.build.residentBytes } })
    const why = differs(plan.build, build)
    if (why !== undefined) throw new ShapeError(`at ${at} the program differs from the plan made at the ceiling (${this.describe()}): ${why}; prepare the package for a narrower range`)
    return build
  }

  /** A resident constant computed at plan time from the input shapes (not one of the graph's constants). */
  private isShapeConstant(s: ConstantSource): s is Extract<ConstantSource, { kind: 'host' }> {
    return s.kind === 'host' && !this.graph.initializers.has(s.name)
  }

  /** The bytes of a build's resident constants that depend on the input shapes (not graph constants). */
  private shapeWrites(build: BudgetProgram): ShapeRun['writes'] {
    const out: Array<{ offset: number; data: Uint8Array }> = []
    for (const r of build.resident) {
      const s = r.source
      if (!this.isShapeConstant(s)) continue
      const form = parseFormKey(s.form)
      out.push({ offset: r.offset, data: tensorBytes(form === undefined ? s.data : this.transform(s.data, form, s.node)) })
    }
    return out
  }
}

/** Where a shape's build departs from the ceiling's: tensors, loads, ops, I/O (undefined: nowhere). */
function differs(ceiling: BudgetProgram, b: BudgetProgram): string | undefined {
  if (b.ops !== ceiling.ops) return `${b.ops} ops against ${ceiling.ops}`
  const ct = ceiling.problem.tensors
  const bt = b.problem.tensors
  if (bt.length !== ct.length) return `${bt.length} tensors against ${ct.length}`
  for (let i = 0; i < bt.length; i++) {
    const x = bt[i]!
    const y = ct[i]!
    if (x.kind !== y.kind || x.first !== y.first || x.last !== y.last) return `tensor ${i} (${x.name ?? x.kind}) lives at ops ${x.first}..${x.last}, at the ceiling ${y.name ?? y.kind} at ${y.first}..${y.last}`
    if (x.bytes > y.bytes) return `tensor ${i} (${x.name ?? x.kind}) takes ${x.bytes} bytes, more than the ${y.bytes} planned`
    const l = b.loads[i]
    const m = ceiling.loads[i]
    if ((l === undefined) !== (m === undefined) || (l !== undefined && (l.blob !== m!.blob || l.start !== m!.start || l.bytes !== m!.bytes))) return `tensor ${i} (${x.name ?? x.kind}) loads other bytes`
  }
  if (b.inputs.length !== ceiling.inputs.length || b.inputs.some((x, i) => x.tensor !== ceiling.inputs[i]!.tensor)) return 'its inputs are other tensors'
  for (let i = 0; i < b.outputs.length; i++) {
    const x = b.outputs[i]!.source
    const y = ceiling.outputs[i]!.source
    if (x.kind !== y.kind || (x.kind === 'tensor' && y.kind === 'tensor' && x.tensor !== y.tensor)) return `output '${b.outputs[i]!.name}' comes from elsewhere`
  }
  return undefined
}
