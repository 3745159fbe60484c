// SPDX-License-Identifier: Apache-2.0
// BudgetedEngine: runs a package (.fpk, written by `flexpipe prepare`) inside a memory budget (FlexNN).
//
// open():   reads and checks the manifest, infers shapes of the planned graph, lists each step's kernel
//           options, plans for the budget (slicing + preload-aware memory plan) and applies the plan's
//           ExecutionPlan (lib/plan/budget/budget-execution.ts): ONE arena (resident constants, then the
//           planned region), the resident constants written, the pinned weights read.
// infer():  the executor runs the plan: inputs copied in, the load queue (weights read from the package
//           into planned offsets: io_uring, O_DIRECT, optional bandwidth throttle) and the ops run
//           together, each waiting for the other only at the plan's edges, outputs copied out.
// setMemoryBudget(): between inferences, re-plans (keeping the slicing when it still fits) and applies
//           the new plan; inferences queued before it finish under the old plan.
// 'auto':   the budget follows the machine's memory limit (budget-follower.ts): checked before each
//           inference and once a second while idle, re-planned in the same queue.
// ranges:   a package prepared for dim ranges (--dim batch=1..8) is planned at the ranges' ceiling, and
//           every input shape in them runs that plan on its actual sizes (budget-shapes.ts).
import { MemoryBudgetError, PackageError } from '../errors.js'
import { dtypeCode } from '../model/dtype.js'
import type { Tensor } from '../model/tensor.js'
import { binding } from '../native/binding.js'
import { decodePackageGraph } from '../package/graph-codec.js'
import { PackageReader, type BlobEntry } from '../package/index.js'
import { budgetExecutionPlan, type TransformFn } from '../plan/budget/budget-execution.js'
import { budgetModel, type PackageModel } from '../plan/budget/budget-model.js'
import { budgetReserve, measuredReserve, replanSlackBytes } from '../plan/budget/budget-reserve.js'
import { directConvolutionOnly, leanWinogradOnly, withoutWinograd } from '../plan/budget/kernel-options.js'
import type { EngineFigures } from '../plan/budget/auto-budget.js'
import { budgetPlans, minimumBudget, planForBudget, unlimitedBudget, type BudgetPlan, type PlanPolicy } from '../plan/budget/plan-budget.js'
import { opTimes, planTimes } from '../plan/budget/plan-times.js'
import { loadBytes, type ExecutionPlan } from '../plan/execution-plan.js'
import { planProfile } from '../profile/budget-device.js'
import { BudgetFollower, type AutoBudgetChange, type AutoBudgetStats } from './budget-follower.js'
import { checkBudget, checkBudgetOptions, type CheckedBudgetOptions, type FollowOptions, type PackageOpenOptions } from './budget-options.js'
import { EngineBase, opTimings, type Computed, type EngineStats } from './engine-base.js'
import type { AppliedPlan } from './executor.js'
import { foldNative } from './fold-native.js'
import { MemoryLimitReader } from './memory-limit.js'
import { outputArrays } from './output-arrays.js'
import { runPrepack } from './prepack.js'
import { BudgetShapes } from './budget-shapes.js'
import { packageDimRanges } from './package-dims.js'
import type { Graph } from '../model/ir.js'

export type { PackageOpenOptions, ReadGeometry } from './budget-options.js'

export interface BudgetStats extends EngineStats {
  readonly memoryBudget: number
  readonly residentBytes: number
  /**
   * The budget outside the arena: the larger of the estimate (budgetReserve: the V8 heap grown by
   * planning, native bookkeeping, the arrays infer() returns) and what opening measurably grew the
   * process by plus what inference adds (measuredReserve). The arena gets the rest, never less than
   * the package's minimum arena.
   */
  readonly reservedBytes: number
  /** How much the process's resident memory grew while this engine opened and planned, before its arena existed. */
  readonly openGrowthBytes: number
  readonly plannedBytes: number
  readonly pinnedBytes: number
  /** Bytes read from the package per inference (weights that are not pinned). */
  readonly loadBytesPerInference: number
  readonly loadsPerInference: number
  readonly ops: number
  /** Layers whose weight is cut into slices. */
  readonly slicedLayers: number
  /** Layers running another kernel or input slicing than the model's default (for memory, IO or measured speed). */
  readonly changedKernels: number
  readonly preloadedWeights: number
  /** A package prepared for dim ranges: the ranges (the plan is made at their max), and the shapes' programs kept. */
  readonly dims?: {
    readonly ranges: Readonly<Record<string, readonly [number, number]>>
    /**
     * The values the plan in force serves up to: each range's max, or below it when the memory budget
     * cannot hold the plan there (larger values are refused with a MemoryBudgetError).
     */
    readonly served: Readonly<Record<string, number>>
    readonly shapePrograms: number
    /** Whether new shapes take their program from the plan's template (else an exact build each), and why not. */
    readonly templated: boolean
    readonly reason?: string
  }
  /** The planner's simulated time of one inference under the active plan (lib/plan/budget/pipeline-sim.ts), when profiled. */
  readonly modelledMs?: number
  /**
   * The last inference that read weights: how long its ops waited for loads, its loads for ops, and its
   * reads took (ms), and the loads and bytes it read.
   */
  readonly lastPipeline?: { readonly computeWaitMs: number; readonly loadWaitMs: number; readonly readMs: number; readonly loads: number; readonly bytes: number }
  /** With memoryBudget 'auto': what the engine read of the machine and decided. */
  readonly auto?: AutoBudgetStats
}

export interface BudgetChange {
  /** Whether layer slicing ran again (false: the current slicing fit the new budget). */
  readonly resliced: boolean
  /** Planning time (slicing + memory planning), ms. */
  readonly planMs: number
  /** Re-allocation and reloading of resident data, ms. */
  readonly applyMs: number
}

/** The GEMM panel width of this build's kernels (the packed weight layout depends on it). */
function gemmPanelWidth(): number {
  const r = binding().prepack('gemm_pack_b', { dtype: dtypeCode('float32'), dims: [1, 1], data: new Float32Array(1) }, [0])
  return r.dims[2]!
}

interface Active {
  readonly plan: BudgetPlan
  readonly applied: AppliedPlan
}

export class BudgetedEngine extends EngineBase {
  readonly kind = 'budget' as const
  /** The smallest arena the package plans in with this engine's options. */
  private readonly arenaMinimum: number
  /** The budget outside the arena as estimated (see `budgetReserve`); it sets the minimum budget. */
  private readonly reserve: number
  /** The budget outside the arena as measured at open (see `measuredReserve`); 0 until then. */
  private measured = 0
  /** The process's resident growth during open, before the arena (see `BudgetStats.openGrowthBytes`). */
  private openGrowth = 0
  private active: Active | undefined
  private lastPipeline: BudgetStats['lastPipeline']
  private budget = 0
  /** Set while the budget follows the machine ('auto'). */
  private follower: BudgetFollower | undefined
  private follow: FollowOptions & { onAutoBudget?: (change: AutoBudgetChange) => void } = {}
  /** The arena of the full model (every weight resident), once asked for. */
  private fullArena: number | undefined
  /** Set for a package prepared for dim ranges. */
  private shapes: BudgetShapes | undefined
  /** The planner's model at a bucket ceiling below the ranges' top, made once per ceiling. */
  private ceilingModelAt: ((dims: ReadonlyMap<string, number>) => PackageModel) | undefined
  private readonly ceilingModels = new Map<string, PackageModel>()
  /** The model at the ranges' top (or of the fixed dims): the minimum budget is this model's. */
  private readonly fullModel: PackageModel
  /** The model each plan was made with, and the dims it serves up to (a package prepared for ranges). */
  private readonly planModels = new WeakMap<BudgetPlan, { readonly model: PackageModel; readonly served?: ReadonlyMap<string, number> }>()

  private constructor(
    private readonly path: string,
    /** The model of the plan in force. */
    private model: PackageModel,
    private readonly policy: PlanPolicy,
    options: CheckedBudgetOptions,
    minimum: number,
    /** The package graph's inputs and outputs (with symbolic dims when prepared for ranges). */
    io: Pick<Graph, 'inputs' | 'outputs'>,
    ranged: boolean,
  ) {
    const g = options.readGeometry
    super(
      io.inputs.map((d) => ({ name: d.name, dtype: d.dtype, dims: d.dims! })),
      io.outputs.map((o) => {
        const v = model.inferred.values.get(o.name)!
        return { name: o.name, dtype: v.dtype, dims: o.dims ?? v.dims }
      }),
      {
        threads: options.threads,
        io: options.io,
        read: {
          direct: options.direct,
          ...(options.ioBandwidth === undefined ? {} : { bandwidth: options.ioBandwidth }),
          ...(g === undefined ? {} : { chunkBytes: g.chunkBytes, queueDepth: g.queueDepth }),
        },
      },
    )
    this.arenaMinimum = minimum
    this.reserve = budgetReserve(model, ranged)
    this.fullModel = model
  }

  /**
   * Opens a package for inference within `memoryBudget`. `internal.leanKernels` (profiling): 'winograd'
   * runs Winograd layers with their lean Winograd kernels, 'other' with their other kernels.
   * `internal.shapeTemplates: false` (tests): a range's shapes get exact builds, never the template.
   */
  static async open(path: string, options: PackageOpenOptions = {}, internal: { leanKernels?: 'winograd' | 'other'; shapeTemplates?: boolean } & FollowOptions = {}): Promise<BudgetedEngine> {
    binding() // loaded first: the addon and its libraries are the process's, not this engine's
    const rssAtOpen = process.memoryUsage.rss()
    const opts = checkBudgetOptions(options, path)
    const reader = await PackageReader.open(path, { verify: opts.verify })
    let model: PackageModel
    let minimum: number
    let io: Pick<Graph, 'inputs' | 'outputs'>
    let shapes: BudgetShapes | undefined
    let ceilingModelAt: BudgetedEngine['ceilingModelAt']
    let policy: PlanPolicy = { preload: opts.preload, pin: opts.pin, staticPlan: opts.staticPlan, slicing: true }
    try {
      const meta = reader.manifest.meta
      const label = `package ${path}`
      if (meta.kind === 'flexpipe-elastic') throw new PackageError(`${label} is an elastic package, not a memory-budget one; open it with open() or openElastic()`)
      if (meta.kind !== 'flexpipe-model') throw new PackageError(`${label}: not a model package (meta.kind ${JSON.stringify(meta.kind)}); re-run flexpipe prepare`)
      const nr = gemmPanelWidth()
      if (meta.gemmNr !== nr) {
        throw new PackageError(
          `${label}: its weights are packed for GEMM panels of ${String(meta.gemmNr)} floats (${String(meta.isa)}), but this machine's kernels use ${nr} (${binding().info().isa}); run flexpipe prepare on this machine`,
        )
      }
      const blobs = new Map<string, BlobEntry>(reader.manifest.blobs.map((b) => [b.name, b]))
      const pg = decodePackageGraph(reader.manifest.graph, reader.path, (n) => blobs.get(n), label)
      io = pg.graph
      const kernels = (m: PackageModel): PackageModel => {
        if (meta.kernels === 'direct') m = directConvolutionOnly(m)
        if (internal.leanKernels === 'winograd') m = leanWinogradOnly(m)
        if (internal.leanKernels === 'other') m = withoutWinograd(m)
        return m
      }
      const ranges = packageDimRanges(meta.dims, pg.graph, label)
      const transform: TransformFn = (data, form, node) => runPrepack(data, { input: 0, ...form }, node)
      const profile = planProfile(meta.profile, opts.threads, opts.ioBandwidth)
      if (ranges.size > 0) {
        shapes = new BudgetShapes(pg.graph, ranges, (dims, ceiling) => kernels(budgetModel(shapes!.graphAt(dims), pg.stored, blobs, nr, opts.threads, foldNative, undefined, ceiling)), transform, foldNative, internal.shapeTemplates ?? true)
        ceilingModelAt = (dims) => kernels(budgetModel(shapes!.graphAt(dims), pg.stored, blobs, nr, opts.threads, foldNative, profile))
      }
      const graph = shapes === undefined ? pg.graph : shapes.graphAt(shapes.top)
      model = kernels(budgetModel(graph, pg.stored, blobs, nr, opts.threads, foldNative, profile))
      if (meta.slicing === false) policy = { ...policy, slicing: false }
      const recorded = typeof meta.minimumBudget === 'number' ? meta.minimumBudget : undefined
      const defaults = opts.preload && opts.pin && opts.staticPlan
      // The minimum prepare recorded saves the search, but only if it still plans here: a re-measured
      // profile or a throttle can change the kernel order it was found with.
      const usable = defaults && recorded !== undefined && meta.minimumThreads === opts.threads && budgetPlans(model, recorded, policy)
      minimum = usable ? recorded : minimumBudget(model, policy)
    } finally {
      await reader.close()
    }
    const engine = new BudgetedEngine(path, model, policy, opts, minimum, io, shapes !== undefined)
    engine.shapes = shapes
    engine.ceilingModelAt = ceilingModelAt
    try {
      engine.follow = { memoryRoot: internal.memoryRoot, autoConstants: internal.autoConstants, onAutoBudget: opts.onAutoBudget }
      const budget = opts.memoryBudget === 'auto' ? engine.startFollowing() : opts.memoryBudget
      let plan = engine.planFor(budget)
      engine.prepareShapes(plan) // its template: measured with the opening
      // What opening really cost shows only now (V8 grows its young generation while planning, by an
      // amount no formula predicts well): if it is more than the estimate, plan again for a smaller arena.
      // Planning again can grow the heap further (a range's template is made again too): measured again.
      let planned = engine.reserve
      for (let again = 0; again < 3; again++) {
        engine.openGrowth = Math.max(engine.openGrowth, process.memoryUsage.rss() - rssAtOpen)
        // and what the shape programs of a range will take while kept
        engine.measured = measuredReserve(engine.openGrowth, model) + (shapes?.keptBytes() ?? 0)
        if (budget === undefined || engine.measured <= planned + replanSlackBytes) break
        // at the minimum arena (of the ranges' top), planning again would only plan the same arena
        const floor = engine.planModels.get(plan)?.model === engine.fullModel ? engine.arenaMinimum : 0
        if (Math.max(floor, budget - engine.measured) >= plan.budget) break
        planned = engine.measured
        plan = engine.planFor(budget, plan)
        engine.prepareShapes(plan)
      }
      await engine.apply(plan)
      engine.budget = budget ?? plan.budget + engine.reserve
    } catch (err) {
      await engine.close()
      throw err
    }
    return engine
  }

  /**
   * Changes the memory budget. Takes effect after the inferences already queued; re-plans (keeping the
   * slicing when it still fits), re-sizes the arena and reloads resident data. Rejects with a
   * MemoryBudgetError naming the minimum when the budget is too small (the old plan stays). 'auto'
   * starts following the machine's memory limit; a number stops it.
   */
  setMemoryBudget(bytes: number | 'auto'): Promise<BudgetChange> {
    try {
      this.executor('setMemoryBudget')
      if (bytes !== 'auto') checkBudget(bytes)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(async () => {
      this.follower?.stop()
      this.follower = undefined
      return this.rebudget(bytes === 'auto' ? this.startFollowing() : bytes)
    })
  }

  override async close(): Promise<void> {
    this.follower?.stop()
    await super.close()
  }

  get memoryBudget(): number {
    return this.budget
  }

  /** The smallest memory budget (bytes) this package runs in with this engine's options (arena + bookkeeping). */
  get minimumBudget(): number {
    return this.arenaMinimum + this.reserve
  }

  stats(): BudgetStats {
    const a = this.activePlan()
    const { plan: p, choices, build: b } = a.plan
    const loads = a.applied.plan.loads
    return {
      ...this.sessionStats(),
      memoryBudget: this.budget,
      residentBytes: b.residentBytes,
      reservedBytes: Math.max(this.reserve, this.measured),
      openGrowthBytes: this.openGrowth,
      plannedBytes: p.arenaBytes,
      pinnedBytes: p.pinnedBytes,
      loadBytesPerInference: loadBytes(a.applied.plan),
      loadsPerInference: loads === undefined ? 0 : loads.after.length,
      ops: b.ops,
      slicedLayers: choices.filter((c) => c.weightSlices > 1).length,
      changedKernels: choices.filter((c, i) => {
        const l = this.model.layers[i]!
        return l.options[c.option]!.kernel !== l.defaultKernel || c.inputSlices !== l.defaultInputSlices
      }).length,
      preloadedWeights: p.preloadedWeights,
      ...(this.shapes === undefined
        ? {}
        : { dims: { ranges: Object.fromEntries(this.shapes.ranges), served: Object.fromEntries(this.shapes.ceiling), shapePrograms: this.shapes.programCount, ...this.shapes.templated } }),
      ...(this.model.profile === undefined ? {} : { modelledMs: planTimes(this.model.profile, b, p, opTimes(this.model.layers, this.model.profile, b, choices)).makespanMs }),
      ...(this.lastPipeline === undefined ? {} : { lastPipeline: this.lastPipeline }),
      ...(this.follower === undefined ? {} : { auto: this.follower.stats() }),
    }
  }

  /** Re-plans for `bytes` (in the queue). */
  private async rebudget(bytes: number): Promise<BudgetChange> {
    // no plan when a change failed and so did going back (the package was gone): plan afresh
    const before = this.active?.plan
    const plan = this.planFor(bytes, before)
    const t0 = performance.now()
    try {
      await this.apply(plan, before !== undefined && !plan.resliced)
      this.budget = bytes
    } catch (err) {
      // Keep the engine usable: go back to the plan that worked (it rejects too if the package is gone).
      if (before !== undefined) await this.apply(before).catch(() => undefined)
      throw err
    }
    return { resliced: plan.resliced, planMs: plan.ms, applyMs: performance.now() - t0 }
  }

  /** Starts following the machine: the budget to plan for now. */
  private startFollowing(): number {
    const f = this.follow
    this.follower = new BudgetFollower(this.figures(), f.onAutoBudget, new MemoryLimitReader(f.memoryRoot), f.autoConstants)
    this.follower.watch((check) => this.queue.push(check), () => this.followMachine())
    return this.follower.budget
  }

  /** In the queue: reads the machine and re-plans when the policy says so (a failure shows in stats().auto). */
  private async followMachine(): Promise<void> {
    if (this.follower !== undefined && this.active !== undefined) await this.follower.follow(this.figures(), (bytes) => this.rebudget(bytes))
  }

  /** What the auto policy needs of the engine (lib/plan/budget/auto-budget.ts). */
  private figures(): EngineFigures {
    const reserve = Math.max(this.reserve, this.measured)
    this.fullArena ??= unlimitedBudget(this.fullModel, this.policy)
    const arena = this.active === undefined ? 0 : this.sessionStats().arenaBytes
    return { rssBytes: process.memoryUsage.rss(), ownBytes: arena + reserve, minimumBudget: this.minimumBudget, fullBudget: this.fullArena + reserve }
  }

  /**
   * Plans for a memory budget (`undefined`: every weight resident); the arena gets the budget minus the
   * larger of the estimated and the measured reserve, but at least the minimum arena (a budget at the
   * minimum is accepted as promised, though opening may have cost more than estimated). A package
   * prepared for ranges whose top does not fit plans at the largest bucket ceiling below it that does.
   */
  private planFor(budget: number | undefined, previous?: BudgetPlan): BudgetPlan {
    try {
      return this.planAtTop(budget, previous)
    } catch (err) {
      if (!(err instanceof MemoryBudgetError) || this.shapes === undefined || budget === undefined) throw err
      const bytes = budget - Math.max(this.reserve, this.measured)
      for (const served of bytes > 0 ? this.shapes.lowerCeilings() : []) {
        const key = [...served.values()].join('x')
        let m = this.ceilingModels.get(key)
        if (m === undefined) this.ceilingModels.set(key, (m = this.ceilingModelAt!(served)))
        try {
          return this.planWith(m, bytes, previous, served)
        } catch (e) {
          if (!(e instanceof MemoryBudgetError)) throw e
        }
      }
      throw err
    }
  }

  /** planFor at the ranges' top (or the fixed dims). */
  private planAtTop(budget: number | undefined, previous?: BudgetPlan): BudgetPlan {
    if (budget !== undefined && budget < this.minimumBudget) {
      throw new MemoryBudgetError(
        `a memory budget of ${budget} bytes is below the minimum of ${this.minimumBudget} bytes for this package (arena ${this.arenaMinimum} + bookkeeping and outputs ${this.reserve}${this.rangeNote()}); give at least ${this.minimumBudget} bytes`,
        this.minimumBudget,
      )
    }
    const m = this.fullModel
    const bytes = budget === undefined ? unlimitedBudget(m, this.policy) : Math.max(this.arenaMinimum, budget - Math.max(this.reserve, this.measured))
    try {
      return this.planWith(m, bytes, previous, this.shapes?.top)
    } catch (err) {
      if (err instanceof MemoryBudgetError) {
        throw new MemoryBudgetError(`${err.message}; the minimum for this package is ${this.minimumBudget} bytes`, this.minimumBudget)
      }
      throw err
    }
  }

  /**
   * planForBudget on model `m` (keeping `previous`'s slicing only if it was made on the same model),
   * remembering the model and the dims the plan serves up to.
   */
  private planWith(m: PackageModel, bytes: number, previous: BudgetPlan | undefined, served: ReadonlyMap<string, number> | undefined): BudgetPlan {
    const plan = planForBudget(m, bytes, this.policy, previous !== undefined && this.planModels.get(previous)?.model === m ? previous : undefined)
    this.planModels.set(plan, { model: m, ...(served === undefined ? {} : { served }) })
    return plan
  }

  /** Makes `plan`'s model the engine's and, for a package prepared for ranges, the plan's shape template. */
  private prepareShapes(plan: BudgetPlan): void {
    const pm = this.planModels.get(plan)
    if (pm === undefined) return
    this.model = pm.model
    if (pm.served !== undefined) this.shapes?.prepareFor(plan, pm.model, pm.served)
  }

  /** The dims of these inputs under the plan in force; a MemoryBudgetError for a value above what it serves. */
  private dimsOf(tensors: Tensor[]): Map<string, number> {
    const s = this.shapes!
    const dims = s.bind(tensors)
    for (const [n, v] of dims) {
      const served = s.ceiling.get(n)!
      if (v <= served) continue
      const [lo, hi] = s.ranges.get(n)!
      throw new MemoryBudgetError(
        `'${n}' is ${v}, but the memory budget of ${this.budget} bytes holds this package's plan only up to ${n} = ${served} (its range is ${lo}..${hi}); give at least ${this.minimumBudget} bytes to run every ${n} up to ${hi}`,
        this.minimumBudget,
      )
    }
    return dims
  }

  /** For a package prepared for ranges: the shapes the minimum is for, and how to need less. */
  private rangeNote(): string {
    const s = this.shapes
    if (s === undefined) return ''
    const narrower = [...s.ranges].map(([n, [lo, hi]]) => `--dim ${n}=${lo}..${Math.max(lo, Math.floor(hi / 2))}`).join(' ')
    return `, planned for ${s.describe(s.top)}, the top of its ranges, and no smaller bucket of the range fits either; a package prepared for a narrower range (${narrower}) needs less`
  }

  /** Makes `plan` the active plan (keeping the resident constants of the one before, when asked). */
  private async apply(plan: BudgetPlan, keepResident = false): Promise<void> {
    const x = this.executor('plan')
    const old = this.active
    this.shapes?.reset(x)
    if (old !== undefined) x.remove(old.applied)
    this.active = undefined
    // A range's shapes: the plan's template, checked at the floor (a plan that does not cover the floor
    // is a ShapeError now, not at some call); at open it is made before the arena (see open()).
    this.prepareShapes(plan)
    const exec = budgetExecutionPlan(plan, this.path, this.model.blobs, (data, form, node) => runPrepack(data, { input: 0, ...form }, node), keepResident)
    this.active = { plan, applied: await x.apply(exec) }
  }

  protected async compute(tensors: Tensor[], profile: boolean): Promise<Computed> {
    await this.followMachine()
    const a = this.activePlan()
    const x = this.executor('infer')
    let applied = a.applied
    if (this.shapes !== undefined) {
      const run = this.shapes.runFor(this.dimsOf(tensors), a, this.model, x)
      this.shapes.prepare(run, x)
      applied = run.applied
    }
    const exec = applied.plan
    const byName = new Map(this.model.graph.inputs.map((d, i) => [d.name, tensors[i]!]))
    const { outputs, buffers } = outputArrays(exec.outputs, (name) => byName.get(name)!)
    const inputs = exec.inputs.map((i): [number, ArrayBufferView] => [i.tensor, byName.get(i.name)!.data])
    const r = await x.run(applied, inputs, buffers, { profile })
    const p = r.pipeline
    if (p !== undefined) this.lastPipeline = { computeWaitMs: p.computeWaitMs, loadWaitMs: p.loadWaitMs, readMs: p.ms, loads: p.loadEndMs.length, bytes: p.bytes }
    if (r.opMs === undefined) return { outputs }
    const kernelOf = new Map(this.model.layers.map((l, i) => [l.step.node.name, l.options[a.plan.choices[i]!.option]!.kernel]))
    return { outputs, ops: opTimings(exec, r.opMs, (node) => kernelOf.get(node) ?? 'as-is'), run: { plan: exec, report: r } }
  }

  protected async planOf(tensors: Tensor[]): Promise<ExecutionPlan> {
    const a = this.activePlan()
    if (this.shapes === undefined) return a.applied.plan
    return this.shapes.runFor(this.dimsOf(tensors), a, this.model, this.executor('plan')).applied.plan
  }

  /** For a package prepared for dim ranges: each range (the engine plans at their max). */
  get dimRanges(): ReadonlyMap<string, readonly [number, number]> {
    return this.shapes?.ranges ?? new Map()
  }

  private activePlan(): Active {
    const a = this.active
    if (a === undefined) throw new MemoryBudgetError('the engine has no plan (the last budget change failed); call setMemoryBudget() with a feasible budget', this.minimumBudget)
    return a
  }
}
