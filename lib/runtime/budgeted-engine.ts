// SPDX-License-Identifier: Apache-2.0
// BudgetedEngine: runs a package (.fpk, written by `flexpipe prepare`) inside a memory budget (FlexNN).
//
// open():   reads and checks the manifest, infers shapes of the planned graph, lists each step's kernel
//           options, plans for the budget (slicing + preload-aware memory plan), sizes ONE arena
//           (resident constants, then the planned region), writes the resident constants and loads the
//           pinned weights.
// infer():  copies inputs in, then runs the load queue (weights read from the package into planned
//           offsets: io_uring, O_DIRECT, optional bandwidth throttle) and the compute queue (op ranges)
//           concurrently, synchronized by the plan's dependencies (pipeline.ts), and copies outputs out.
// setMemoryBudget(): between inferences, re-plans (keeping the slicing when it still fits), re-sizes
//           the arena and continues; inferences queued before it finish under the old plan.
import { availableParallelism } from 'node:os'
import { ArgumentError, DisposedError, MemoryBudgetError, PackageError } from '../errors.js'
import { dtypeCode, type DType } from '../model/dtype.js'
import { inferGraph } from '../model/infer-graph.js'
import { hasFusedDepthwise } from '../model/fuse-conv-depthwise.js'
import { hasFusedPool } from '../model/fuse-conv-pool.js'
import { fusedResidualAttr } from '../model/fuse-residual.js'
import type { Graph } from '../model/ir.js'
import type { ValueInfo } from '../model/ir.js'
import { valueBytes } from '../model/ir.js'
import { binding, type NativeReadOptions, type NativeSession } from '../native/binding.js'
import { PackageReader, type BlobEntry } from '../package/index.js'
import { decodePackageGraph, type StoredConstant } from '../package/graph-codec.js'
import { parseFormKey } from '../model/forms.js'
import type { Tensor, TensorInfo } from '../tensor.js'
import { runPrepack } from './constants.js'
import { foldNative } from './engine.js'
import { checkFeeds } from './feeds.js'
import { fromNative } from './native-errors.js'
import { SerialQueue } from './serial-queue.js'
import { finishProgram, type BudgetProgram } from '../plan/budget/budget-program.js'
import { isConstantValue, stepLayers, type OptionContext, type StepLayer } from '../plan/budget/layer-options.js'
import { concatsInPlace } from '../plan/memory/concat-in-place.js'
import { outputsInPlace } from '../plan/memory/outputs-in-place.js'
import type { DeviceProfile } from '../profile/budget-device.js'
import { pipelineEdges, type PipelineEdges, type PipelineSchedule } from '../plan/budget/pipeline-edges.js'
import { hostTensor } from '../model/values.js'
import { outputArrays } from './output-arrays.js'
import { opTimes, planSchedule, planTimes } from '../plan/budget/plan-times.js'
import { directConvolutionOnly, leanWinogradOnly, orderByProfile, withoutWinograd, liveBytesPerStep, type PlanProfile, budgetPlans, minimumBudget, planForBudget, unlimitedBudget, type BudgetModel, type BudgetPlan, type PlanPolicy } from '../plan/budget/plan-budget.js'

export interface PackageOpenOptions {
  /** Threads for compute (OpenMP). Default: available cores, at most 4. */
  readonly threads?: number
  /** File reader: io_uring when available ('auto'), or 'uring' / 'pread'. */
  readonly io?: 'auto' | 'uring' | 'pread'
  /** Arena bytes the engine may use (default: as much as the model needs with every weight resident). */
  readonly memoryBudget?: number
  /** Read weights with O_DIRECT (cold IO, no page cache) where the file system allows. Default true. */
  readonly direct?: boolean
  /** Throttle weight reads to this many bytes per second (emulates an SD card or eMMC). */
  readonly ioBandwidth?: number
  /** Preload weights ahead of their layer (default true). */
  readonly preload?: boolean
  /** Keep weights resident across inferences when the budget allows (default true). */
  readonly pin?: boolean
  /** Static memory plan (default true; false: dynamic first-fit, for the ablation benchmark). */
  readonly staticPlan?: boolean
  /** Verify every blob's checksum at open ('all', default) or only the structure ('header'). */
  readonly verify?: 'header' | 'all'
  /**
   * How weight reads walk the disk: requests of at most `chunkBytes` (a multiple of 4096, 4 KiB..64 MiB),
   * `queueDepth` (1..64) of them in flight. Default 256 KiB x 8; `npm run bench:io` compares geometries
   * on a device.
   */
  readonly readGeometry?: ReadGeometry
}

export interface ReadGeometry {
  readonly chunkBytes: number
  readonly queueDepth: number
}

export interface BudgetStats {
  readonly arenaBytes: number
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
  readonly reader: string
  readonly threads: number
  readonly bytesRead: number
  /** The planner's simulated time of one inference under the active plan (lib/plan/budget/pipeline-sim.ts), when profiled. */
  readonly modelledMs?: number
  /** The last inference that read weights: how long its ops waited for loads, its loads for ops, and its reads took (ms). */
  readonly lastPipeline?: { readonly computeWaitMs: number; readonly loadWaitMs: number; readonly readMs: number }
}

export interface BudgetChange {
  /** Whether layer slicing ran again (false: the current slicing fit the new budget). */
  readonly resliced: boolean
  /** Planning time (slicing + memory planning), ms. */
  readonly planMs: number
  /** Re-allocation and reloading of resident data, ms. */
  readonly applyMs: number
}

interface Active {
  readonly plan: BudgetPlan
  readonly program: number
  readonly base: number
  readonly schedule: PipelineSchedule
  readonly edges: PipelineEdges
  /** Per load in queue order: [fileOffset, bytes, arenaOffset]. */
  readonly ranges: readonly Float64Array[]
  /** The same, concatenated (the runPipeline argument). */
  readonly allRanges: Float64Array
}

const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a

/** The GEMM panel width of this build's kernels (the packed weight layout depends on it). */
function gemmPanelWidth(): number {
  const r = binding().prepack('gemm_pack_b', { dtype: dtypeCode('float32'), dims: [1, 1], data: new Float32Array(1) }, [0])
  return r.dims[2]!
}

type CheckedOptions = Required<Omit<PackageOpenOptions, 'memoryBudget' | 'ioBandwidth' | 'readGeometry'>> & Pick<PackageOpenOptions, 'memoryBudget' | 'ioBandwidth' | 'readGeometry'>

function checkOptions(o: PackageOpenOptions): CheckedOptions {
  const threads = o.threads ?? Math.min(availableParallelism(), 4)
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw new ArgumentError(`threads: expected integer 1..256, got ${o.threads}`)
  const io = o.io ?? 'auto'
  if (io !== 'auto' && io !== 'uring' && io !== 'pread') throw new ArgumentError(`io: expected 'auto', 'uring' or 'pread', got ${String(io)}`)
  if (o.memoryBudget !== undefined) checkBudget(o.memoryBudget)
  if (o.ioBandwidth !== undefined && !(Number.isFinite(o.ioBandwidth) && o.ioBandwidth > 0)) {
    throw new ArgumentError(`ioBandwidth: expected bytes per second > 0, got ${o.ioBandwidth}`)
  }
  if (o.readGeometry !== undefined) checkReadGeometry(o.readGeometry, 'readGeometry')
  const verify = o.verify ?? 'all'
  if (verify !== 'all' && verify !== 'header') throw new ArgumentError(`verify: expected 'all' or 'header', got ${String(verify)}`)
  const bool = (v: boolean | undefined, name: string, d: boolean): boolean => {
    if (v !== undefined && typeof v !== 'boolean') throw new ArgumentError(`${name}: expected a boolean, got ${String(v)}`)
    return v ?? d
  }
  return {
    threads,
    io,
    memoryBudget: o.memoryBudget,
    ioBandwidth: o.ioBandwidth,
    direct: bool(o.direct, 'direct', true),
    preload: bool(o.preload, 'preload', true),
    pin: bool(o.pin, 'pin', true),
    staticPlan: bool(o.staticPlan, 'staticPlan', true),
    verify,
    ...(o.readGeometry === undefined ? {} : { readGeometry: { chunkBytes: o.readGeometry.chunkBytes, queueDepth: o.readGeometry.queueDepth } }),
  }
}

/** Throws ArgumentError unless g is a read geometry the native reader takes. */
function checkReadGeometry(g: ReadGeometry, what: string): void {
  const c = g?.chunkBytes
  const d = g?.queueDepth
  if (!Number.isSafeInteger(c) || c < 4096 || c > 64 * 2 ** 20 || c % 4096 !== 0) {
    throw new ArgumentError(`${what}.chunkBytes: expected a multiple of 4096 from 4096 to 64 MiB, got ${String(c)}`)
  }
  if (!Number.isInteger(d) || d < 1 || d > 64) throw new ArgumentError(`${what}.queueDepth: expected an integer 1..64, got ${String(d)}`)
}

function checkBudget(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new ArgumentError(`memoryBudget: expected a positive integer number of bytes, got ${bytes}`)
}

export class BudgetedEngine {
  readonly inputs: readonly TensorInfo[]
  readonly outputs: readonly TensorInfo[]
  private session: NativeSession | undefined
  /** The smallest arena the package plans in with this engine's options. */
  private readonly arenaMinimum: number
  /** The budget outside the arena as estimated (see `budgetReserve`); it sets the minimum budget. */
  private readonly reserve: number
  /** The budget outside the arena as measured at open (see `measuredReserve`); 0 until then. */
  private measured = 0
  /** The process's resident growth during open, before the arena (see `BudgetStats.openGrowthBytes`). */
  private openGrowth = 0
  private readonly queue = new SerialQueue()
  private active: Active | undefined
  private lastPipeline: BudgetStats['lastPipeline']
  private budget: number

  private constructor(
    private readonly path: string,
    private readonly model: PackageModel,
    private readonly policy: PlanPolicy,
    private readonly options: CheckedOptions,
    minimum: number,
  ) {
    this.inputs = model.graph.inputs.map((d) => ({ name: d.name, dtype: d.dtype, dims: d.dims! }))
    this.outputs = model.graph.outputs.map((o) => {
      const v = model.inferred.values.get(o.name)!
      return { name: o.name, dtype: v.dtype, dims: v.dims }
    })
    this.arenaMinimum = minimum
    this.reserve = budgetReserve(model)
    this.budget = 0
    this.session = new (binding().Session)(options.threads, options.io)
  }

  /**
   * Opens a package for inference within `memoryBudget`. `internal.leanKernels` (profiling): 'winograd'
   * runs Winograd layers with their lean Winograd kernels, 'other' with their other kernels.
   */
  static async open(path: string, options: PackageOpenOptions = {}, internal: { leanKernels?: 'winograd' | 'other' } = {}): Promise<BudgetedEngine> {
    binding() // loaded first: the addon and its libraries are the process's, not this engine's
    const rssAtOpen = process.memoryUsage.rss()
    const opts = checkOptions(options)
    const reader = await PackageReader.open(path, { verify: opts.verify })
    let model: PackageModel
    let minimum: number
    let policy: PlanPolicy = { preload: opts.preload, pin: opts.pin, staticPlan: opts.staticPlan, slicing: true }
    try {
      const meta = reader.manifest.meta
      const label = `package ${path}`
      if (meta.kind !== 'flexpipe-model') throw new PackageError(`${label}: not a model package (meta.kind ${JSON.stringify(meta.kind)}); re-run flexpipe prepare`)
      const nr = gemmPanelWidth()
      if (meta.gemmNr !== nr) {
        throw new PackageError(
          `${label}: its weights are packed for GEMM panels of ${String(meta.gemmNr)} floats (${String(meta.isa)}), but this machine's kernels use ${nr} (${binding().info().isa}); run flexpipe prepare on this machine`,
        )
      }
      const blobs = new Map<string, BlobEntry>(reader.manifest.blobs.map((b) => [b.name, b]))
      const pg = decodePackageGraph(reader.manifest.graph, reader.path, (n) => blobs.get(n), label)
      model = budgetModel(pg.graph, pg.stored, blobs, nr, opts.threads, planProfile(meta.profile, opts.threads, opts.ioBandwidth))
      if (meta.kernels === 'direct') model = directConvolutionOnly(model)
      if (internal.leanKernels === 'winograd') model = leanWinogradOnly(model)
      if (internal.leanKernels === 'other') model = withoutWinograd(model)
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
    const engine = new BudgetedEngine(path, model, policy, opts, minimum)
    try {
      let plan = engine.planFor(opts.memoryBudget)
      // What opening really cost shows only now (V8 grows its young generation while planning, by an
      // amount no formula predicts well): if it is more than the estimate, plan again for a smaller arena.
      engine.openGrowth = Math.max(0, process.memoryUsage.rss() - rssAtOpen)
      engine.measured = measuredReserve(engine.openGrowth, model)
      if (opts.memoryBudget !== undefined && engine.measured > engine.reserve + replanSlackBytes) plan = engine.planFor(opts.memoryBudget, plan)
      await engine.apply(plan)
      engine.budget = opts.memoryBudget ?? plan.budget + engine.reserve
    } catch (err) {
      await engine.close()
      throw err
    }
    return engine
  }

  /** Runs the model. Calls are queued: concurrent infer() calls run one after another. */
  infer(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    if (this.session === undefined) return Promise.reject(new DisposedError('infer'))
    let tensors: Tensor[]
    try {
      tensors = checkFeeds(feeds, this.model.graph.inputs)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(() => this.run(tensors))
  }

  /**
   * Changes the memory budget. Takes effect after the inferences already queued; re-plans (keeping the
   * slicing when it still fits), re-sizes the arena and reloads resident data. Rejects with a
   * MemoryBudgetError naming the minimum when the budget is too small (the old plan stays).
   */
  setMemoryBudget(bytes: number): Promise<BudgetChange> {
    if (this.session === undefined) return Promise.reject(new DisposedError('setMemoryBudget'))
    try {
      checkBudget(bytes)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(async () => {
      const before = this.active!.plan
      const plan = this.planFor(bytes, before)
      const t0 = performance.now()
      try {
        await this.apply(plan, !plan.resliced)
        this.budget = bytes
      } catch (err) {
        // Keep the engine usable: go back to the plan that worked (it rejects too if the package is gone).
        await this.apply(before).catch(() => undefined)
        throw err
      }
      return { resliced: plan.resliced, planMs: plan.ms, applyMs: performance.now() - t0 }
    })
  }

  get memoryBudget(): number {
    return this.budget
  }

  stats(): BudgetStats {
    const s = this.live('stats').stats() as ReturnType<NativeSession['stats']> & { bytesRead?: number }
    const a = this.active!
    const b = a.plan.build
    let loadBytes = 0
    for (const r of a.ranges) loadBytes += r[1]!
    return {
      arenaBytes: s.arenaBytes,
      memoryBudget: this.budget,
      residentBytes: b.residentBytes,
      reservedBytes: Math.max(this.reserve, this.measured),
      openGrowthBytes: this.openGrowth,
      plannedBytes: a.plan.plan.arenaBytes,
      pinnedBytes: a.plan.plan.pinnedBytes,
      loadBytesPerInference: loadBytes,
      loadsPerInference: a.ranges.length,
      ops: b.ops,
      slicedLayers: a.plan.choices.filter((c) => c.weightSlices > 1).length,
      changedKernels: a.plan.choices.filter((c, i) => {
        const l = this.model.layers[i]!
        return l.options[c.option]!.kernel !== l.defaultKernel || c.inputSlices !== l.defaultInputSlices
      }).length,
      preloadedWeights: a.plan.plan.preloadedWeights,
      reader: s.reader,
      threads: s.threads,
      bytesRead: s.bytesRead ?? 0,
      ...(this.model.profile === undefined ? {} : { modelledMs: planTimes(this.model.profile, b, a.plan.plan, opTimes(this.model.layers, this.model.profile, b, a.plan.choices)).makespanMs }),
      ...(this.lastPipeline === undefined ? {} : { lastPipeline: this.lastPipeline }),
    }
  }

  /** Waits for queued work, then frees the arena. Idempotent. */
  async close(): Promise<void> {
    const session = this.session
    if (session === undefined) return
    await this.queue.idle()
    this.session = undefined
    session.dispose()
  }

  private live(what: string): NativeSession {
    if (this.session === undefined) throw new DisposedError(what)
    return this.session
  }

  /** The smallest memory budget (bytes) this package runs in with this engine's options (arena + bookkeeping). */
  get minimumBudget(): number {
    return this.arenaMinimum + this.reserve
  }

  /**
   * Plans for a memory budget (`undefined`: every weight resident); the arena gets the budget minus the
   * larger of the estimated and the measured reserve, but at least the minimum arena (a budget at the
   * minimum is accepted as promised, though opening may have cost more than estimated).
   */
  private planFor(budget: number | undefined, previous?: BudgetPlan): BudgetPlan {
    if (budget !== undefined && budget < this.minimumBudget) {
      throw new MemoryBudgetError(
        `a memory budget of ${budget} bytes is below the minimum of ${this.minimumBudget} bytes for this package (arena ${this.arenaMinimum} + bookkeeping and outputs ${this.reserve}); give at least ${this.minimumBudget} bytes`,
        this.minimumBudget,
      )
    }
    const bytes = budget === undefined ? unlimitedBudget(this.model, this.policy) : Math.max(this.arenaMinimum, budget - Math.max(this.reserve, this.measured))
    try {
      return planForBudget(this.model, bytes, this.policy, previous)
    } catch (err) {
      if (err instanceof MemoryBudgetError) {
        throw new MemoryBudgetError(`${err.message}; the minimum for this package is ${this.minimumBudget} bytes`, this.minimumBudget)
      }
      throw err
    }
  }

  /** Makes `plan` the active plan: arena, resident constants, pinned weights, program. */
  private async apply(plan: BudgetPlan, keepResident = false): Promise<void> {
    const session = this.live('plan')
    const b = plan.build
    const base = alignUp(b.residentBytes, 4096)
    const old = this.active
    if (old !== undefined) session.removeProgram(old.program)
    this.active = undefined
    try {
      session.resize(base + plan.plan.arenaBytes, keepResident ? base : 0)
      if (!keepResident) await this.writeResident(session, b)
      const pinned = plan.plan.order.weight.filter((t) => plan.plan.placements[t]!.pinned)
      const rangeOf = (t: number): Float64Array => {
        const l = b.loads[t]!
        const blob = this.blob(l.blob)
        return new Float64Array([blob.offset + l.start, l.bytes, base + plan.plan.placements[t]!.offset])
      }
      if (pinned.length > 0) await this.read(session, concatRanges(pinned.map(rangeOf), 0, pinned.length)) // one batch
      const program = session.addProgram(finishProgram(b, plan.plan, base))
      const schedule = planSchedule(b, plan.plan)
      const ranges = schedule.tensors.map(rangeOf)
      this.active = { plan, program, base, schedule, edges: pipelineEdges(schedule), ranges, allRanges: concatRanges(ranges, 0, ranges.length) }
    } catch (err) {
      throw fromNative(err)
    }
  }

  private blob(name: string): BlobEntry {
    const b = this.model.blobs.get(name)
    if (b === undefined) throw new PackageError(`package ${this.path}: blob '${name}' is missing; re-run flexpipe prepare`, { blob: name })
    return b
  }

  private readOptions(): NativeReadOptions {
    const g = this.options.readGeometry
    return {
      direct: this.options.direct,
      ...(this.options.ioBandwidth === undefined ? {} : { bandwidth: this.options.ioBandwidth }),
      ...(g === undefined ? {} : { chunkBytes: g.chunkBytes, queueDepth: g.queueDepth }),
    }
  }

  private read(session: NativeSession, range: Float64Array): Promise<unknown> {
    return session.readFile(this.path, range, this.readOptions())
  }

  private async writeResident(session: NativeSession, b: BudgetProgram): Promise<void> {
    const ranges: number[] = []
    for (const r of b.resident) {
      if (r.source.kind === 'blob') {
        const blob = this.blob(r.source.blob)
        ranges.push(blob.offset, blob.length, r.offset)
      } else {
        const s = r.source
        const p = parseFormKey(s.form)
        const data = p === undefined ? s.data : runPrepack(s.data, { input: 0, ...p }, s.node)
        session.write(r.offset, data.data)
      }
    }
    if (ranges.length > 0) await session.readFile(this.path, new Float64Array(ranges), { direct: false })
  }

  /**
   * Like infer(), and also reports each native op's wall time with its node and the kernel of its
   * layer (for the device profile prepare records, and for benchmarks).
   */
  inferProfiled(feeds: Record<string, Tensor>): Promise<{ outputs: Record<string, Tensor>; ops: Array<{ node: string; kernel: string; ms: number }> }> {
    if (this.session === undefined) return Promise.reject(new DisposedError('inferProfiled'))
    let tensors: Tensor[]
    try {
      tensors = checkFeeds(feeds, this.model.graph.inputs)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(async () => {
      const b = this.active!.plan.build
      const times = new Float64Array(b.ops)
      const outputs = await this.run(tensors, times)
      const kernelOf = new Map(this.model.layers.map((l, i) => [l.step.node.name, l.options[this.active!.plan.choices[i]!.option]!.kernel]))
      return { outputs, ops: b.opNodes.map((node, k) => ({ node, kernel: kernelOf.get(node) ?? 'as-is', ms: times[k]! })) }
    })
  }

  private async run(tensors: Tensor[], opMs?: Float64Array): Promise<Record<string, Tensor>> {
    const a = this.active
    if (a === undefined) throw new MemoryBudgetError('the engine has no plan (the last budget change failed); call setMemoryBudget() with a feasible budget', this.minimumBudget)
    const session = this.live('infer')
    const b = a.plan.build
    const byName = new Map(this.model.graph.inputs.map((d, i) => [d.name, tensors[i]!]))
    const { outputs, buffers: pairs } = outputArrays(b.outputs, (name) => byName.get(name)!)
    const inputs = b.inputs.map((i): [number, ArrayBufferView] => [i.tensor, byName.get(i.name)!.data])
    try {
      if (a.ranges.length === 0) {
        const ms = await session.run(a.program, 0, inputs, pairs, opMs !== undefined)
        if (opMs !== undefined && ms !== undefined) opMs.set(ms)
      } else {
        const r = await session.runPipeline(a.program, 0, inputs, pairs, opMs !== undefined, this.path, a.allRanges, a.edges.after, a.edges.need, this.readOptions())
        this.lastPipeline = { computeWaitMs: r.computeWaitMs, loadWaitMs: r.loadWaitMs, readMs: r.ms }
        if (opMs !== undefined && r.ops !== undefined) opMs.set(r.ops)
      }
    } catch (err) {
      throw fromNative(err, b.opNodes)
    }
    return outputs
  }
}

/** The [fileOffset, bytes, arenaOffset] triples of loads [begin, end) as one readFile argument. */
function concatRanges(ranges: readonly Float64Array[], begin: number, end: number): Float64Array {
  const out = new Float64Array((end - begin) * 3)
  for (let j = begin; j < end; j++) out.set(ranges[j]!, (j - begin) * 3)
  return out
}

/**
 * The engine's memory outside its arena, which a memory budget also covers (so the process grows by about
 * the budget, not the budget plus bookkeeping): native memory besides the arena (thread stacks, the
 * io_uring ring, the decoded program; 5 MiB) and the V8 heap that opening and planning grow (the graph,
 * kernel options, plans: 1 MiB + 48 KiB per layer, at most 16 MiB — the 16.8 MB young generation that
 * opening the bench models grew V8's to; it can grow to 33.5 MB). Calibrated on the bench models
 * (ResNet-152: 12.6 MB of heap growth measured for 258 layers; PP-OCR cls: 2.7 MB). An estimate: it
 * sets the minimum budget, which prepare reports before any engine exists; an engine then measures
 * what its opening cost (measuredReserve) and keeps the larger.
 */
/**
 * The layer count bookkeepingBytes is calibrated with: the model's layers, plus two for each Conv that
 * absorbed a residual Add (and the Relu after it, lib/model/fuse-residual.ts). The calibration predates
 * that fusion, and planning grows the heap no less for it: ResNet-152 fused plans 158 layers with the
 * same 12.6 MB of heap growth as its 258 unfused ones (counting 158 left a 100 MB budget 5 MB short:
 * peak 108.6 MB). A stem that absorbed its max pool (lib/model/fuse-conv-pool.ts) counts one more, as
 * does a conv that absorbed its depthwise (lib/model/fuse-conv-depthwise.ts).
 */
export function bookkeepingLayers(m: { readonly layers: readonly unknown[]; readonly graph: Graph }): number {
  return m.layers.length + 2 * m.graph.nodes.filter((n) => n.attrs.has(fusedResidualAttr)).length + m.graph.nodes.filter(hasFusedPool).length + m.graph.nodes.filter(hasFusedDepthwise).length
}

/**
 * What a memory budget covers besides the arena: the bookkeeping (bookkeepingBytes) and the arrays
 * infer() returns, which hold the outputs once (the ones an op writes straight into them take no arena
 * bytes, lib/plan/memory/outputs-in-place.ts; the others are also in the arena until copied out). GPT-2's
 * 25.7 MB logits array was outside the budget before, and in the arena too.
 */
export function budgetReserve(m: Pick<BudgetModel, 'graph' | 'inferred' | 'layers'>): number {
  return bookkeepingBytes(bookkeepingLayers(m)) + outputBytes(m)
}

/** A measured reserve this much above the estimate plans again at open (below it, not worth the time). */
const replanSlackBytes = 1 << 20

/**
 * The budget outside the arena as measured: the process's resident growth while the engine opened and
 * planned (its V8 heap, the decoded graph, allocator caches), what the first inferences add outside the
 * arena (`inferenceNativeBytes`), and the arrays infer() returns. Other work the process does while an
 * engine opens is counted too, which only makes the arena smaller.
 */
export function measuredReserve(openGrowth: number, m: Pick<BudgetModel, 'graph' | 'inferred'>): number {
  return openGrowth + inferenceNativeBytes + outputBytes(m)
}

/**
 * What the first inferences add outside the arena: worker thread stacks and their allocator arenas,
 * the reader's queue and code pages touched for the first time. Calibrated on the bench packages as
 * peak minus arena minus open growth minus outputs, one process each: -0.9 (GPT-2) to 3.0 MB
 * (SqueezeNet), 1.7-1.8 MB for ViT-B/16 and VGG-19. V8 can also grow its young generation during the
 * first inferences (MobileNetV2), which this does not cover.
 */
export const inferenceNativeBytes = 2 << 20

function outputBytes(m: Pick<BudgetModel, 'graph' | 'inferred'>): number {
  let outputs = 0
  for (const o of m.graph.outputs) {
    const v = m.inferred.values.get(o.name)
    if (v !== undefined) outputs += valueBytes(v)
  }
  return outputs
}

export function bookkeepingBytes(layers: number): number {
  const heap = Math.min(16 << 20, (1 << 20) + layers * 48 * 1024)
  return (5 << 20) + heap
}

type PackageModel = BudgetModel & { readonly blobs: ReadonlyMap<string, BlobEntry> }

/** The planner's model of a package graph: shapes, kernel options, live bytes, blob lookup. */
export function budgetModel(
  graph: BudgetModel['graph'],
  stored: ReadonlyMap<string, StoredConstant>,
  blobs: ReadonlyMap<string, BlobEntry>,
  gemmNr: number,
  threads: number,
  profile?: (layers: readonly StepLayer[]) => PlanProfile,
): PackageModel {
  const inputs = new Map<string, ValueInfo>(graph.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
  const inferred = inferGraph(graph, inputs, { concrete: true, fold: foldNative, foldCache: new Map() })
  const blobOf = (name: string, form: string): BlobEntry | undefined => {
    const b = stored.get(name)?.forms[form]
    return b === undefined ? undefined : blobs.get(b)
  }
  const ctx: OptionContext = {
    inferred,
    hasForm: (name, form) => blobOf(name, form) !== undefined,
    formBytes: (name, form) => blobOf(name, form)?.length ?? 0,
    gemmNr,
    threads,
  }
  const layers = stepLayers(ctx)
  const concats = concatsInPlace(graph, inferred, (v) => !isConstantValue(v))
  // every graph output that is not a host constant is returned from a program tensor (budget-program.ts)
  const hostOutputs = outputsInPlace(graph, inferred, concats, (v) => !isConstantValue(v), (n) => hostTensor(inferred.values.get(n)!) === undefined)
  const live = liveBytesPerStep(graph, inferred, (n) => isConstantValue(inferred.values.get(n)), concats, hostOutputs)
  return orderByProfile({
    graph,
    inferred,
    layers,
    live: layers.map((l) => live[l.index]!),
    concats,
    hostOutputs,
    lookup: { blob: (name, form) => blobOf(name, form) },
    formShape: (name, form) => {
      const b = blobOf(name, form)
      return b?.dtype === undefined || b.dims === undefined ? undefined : { dtype: b.dtype as DType, dims: b.dims.slice() }
    },
    gemmNr,
    blobs,
    ...(profile === undefined ? {} : { profile: profile(layers) }),
  })
}

/**
 * The planner's view of a recorded device profile (lib/profile/budget-device.ts), when it was measured with
 * the engine's thread count; the read bandwidth is capped by the throttle.
 */
export function planProfile(recorded: unknown, threads: number, throttle?: number): ((layers: readonly StepLayer[]) => PlanProfile) | undefined {
  if (typeof recorded !== 'object' || recorded === null) return undefined
  const r = recorded as Partial<DeviceProfile>
  if (r.threads !== threads || typeof r.readBandwidth !== 'number' || !(r.readBandwidth > 0) || typeof r.layers !== 'object' || r.layers === null) return undefined
  const table = r.layers as Record<string, Record<string, unknown>>
  const bandwidth = Math.min(r.readBandwidth, throttle ?? Infinity)
  return (layers) => ({
    bandwidth,
    ms: (i, kernel) => {
      const v = table[layers[i]?.step.node.name ?? '']?.[kernel]
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined
    },
  })
}
