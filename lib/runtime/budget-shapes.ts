// SPDX-License-Identifier: Apache-2.0
// The input shapes of a memory-budget package prepared for dim ranges (`flexpipe prepare --dim
// batch=1..8`; Nimble's buckets under FlexNN's budget). The budget plan (slicing, pins, loads, memory
// layout) is made once, at the ranges' ceiling, and sized the arena; every input shape in the ranges
// runs that plan on its actual sizes. Its program is the ceiling's rebuilt at the shape's dims: the same
// layers with the same kernels and slices, every tensor at the place the ceiling plan gave it, the same
// loads in the same order. No memory is planned and none is added per shape.
//
// Safety does not rest on the shapes being monotone: the shape's build is compared with the ceiling's
// tensor by tensor (kind, lifetime, load, bytes no larger than the planned ones) and a difference is a
// ShapeError naming the tensor, before any program runs. Values that depend on the input shapes and
// fold to resident constants (a position-embedding slice) are written into their ceiling-sized places
// before a shape runs, when another shape's are there.
import { ShapeError } from '../errors.js'
import { bindInputDims } from '../model/bind-input-dims.js'
import type { Graph, TensorData } from '../model/ir.js'
import type { Tensor } from '../model/tensor.js'
import { parseFormKey } from '../model/forms.js'
import type { BudgetPlan } from '../plan/budget/plan-budget.js'
import type { PackageModel } from '../plan/budget/budget-model.js'
import { buildBudgetProgram, finishProgram, type BudgetProgram } from '../plan/budget/budget-program.js'
import { plannedBase } from '../plan/budget/budget-execution.js'
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

export type TransformFn = (data: TensorData, form: { readonly transform: string; readonly ints: readonly number[] }, node: string) => TensorData

export class BudgetShapes {
  /** The dims the plan is made at: every range's max. */
  readonly ceiling: ReadonlyMap<string, number>
  private readonly inputSymbols: ReadonlyArray<ReadonlyArray<string | undefined>>
  private readonly programs = new Map<string, ShapeRun>()
  /** The shape whose shape-dependent constants are in the arena now. */
  private constantsFor: string | undefined
  private ceilingRun: ShapeRun | undefined

  constructor(
    /** The package graph, its inputs with the symbolic dims. */
    private readonly graph: Graph,
    readonly ranges: ReadonlyMap<string, PackageDimRange>,
    /** The planner's model of the graph at these dims (the ceiling's in-place Concats kept at most). */
    private readonly modelAt: (dims: ReadonlyMap<string, number>) => PackageModel,
    private readonly transform: TransformFn,
    private readonly maxPrograms = 16,
  ) {
    this.ceiling = new Map([...ranges].map(([n, r]) => [n, r[1]]))
    this.inputSymbols = graph.inputs.map((d) => (d.dims ?? []).map((x) => (typeof x === 'string' ? x : undefined)))
  }

  /** The graph with its ranges' dims at `dims`. */
  graphAt(dims: ReadonlyMap<string, number>): Graph {
    return bindInputDims(this.graph, dims)
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
    if (key === [...this.ceiling.values()].join('x')) return (this.ceilingRun ??= { key, applied: active.applied, writes: this.shapeWrites(active.plan.build) })
    let run = this.programs.get(key)
    if (run !== undefined) {
      this.programs.delete(key)
      this.programs.set(key, run) // most recently used last
      return run
    }
    const build = this.buildAt(dims, active.plan, ceilingModel)
    const words = finishProgram(build, active.plan.plan, plannedBase(active.plan))
    const plan: ExecutionPlan = { ...active.applied.plan, program: words, inputs: build.inputs, outputs: build.outputs, opNodes: build.opNodes, opKinds: build.opKinds, resident: [] }
    let program: number
    try {
      program = x.session.addProgram(words)
    } catch (err) {
      throw fromNative(err)
    }
    run = { key, applied: { plan, program }, writes: this.shapeWrites(build) }
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

  /** The ceiling plan's program rebuilt at `dims`, checked against the ceiling's build. */
  private buildAt(dims: ReadonlyMap<string, number>, plan: BudgetPlan, ceilingModel: PackageModel): BudgetProgram {
    const at = this.describe(dims)
    const m = this.modelAt(dims)
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

  /** The bytes of a build's resident constants that depend on the input shapes (not graph constants). */
  private shapeWrites(build: BudgetProgram): ShapeRun['writes'] {
    const out: Array<{ offset: number; data: Uint8Array }> = []
    for (const r of build.resident) {
      const s = r.source
      if (s.kind !== 'host' || this.graph.initializers.has(s.name)) continue
      const form = parseFormKey(s.form)
      const t = form === undefined ? s.data : this.transform(s.data, form, s.node)
      const d = t.data as ArrayBufferView
      out.push({ offset: r.offset, data: new Uint8Array(d.buffer, d.byteOffset, d.byteLength) })
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
