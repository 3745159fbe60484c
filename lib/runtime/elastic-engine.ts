// SPDX-License-Identifier: Apache-2.0
// ElasticEngine: a transformer classifier that answers within a target latency from cold storage (the
// STI seed). With a target it plans (lib/plan/elastic: compute planning, accumulated IO budgets, shard
// versions by importance, the preload buffer) from this device's profile and keeps the plan honest with
// the latency controller; without one it runs the full model. Either way the plan's layer-wise
// IO/compute pipeline runs on the one executor's native gate (elastic-runner.ts).
//
//   const engine = await open('spam.fpk', { targetLatencyMs: 40, preloadBytes: 1 << 20 })
//   const [r] = await engine.classify('WIN A FREE CRUISE ...')   // { label: 'spam', score, ... }
//   const { logits } = await engine.infer({ input_ids, attention_mask })
//   await engine.setTargetLatency(25)                              // re-plans
import { ArgumentError, InputError, LatencyTargetError } from '../errors.js'
import type { EncoderConfig } from '../model/encoder-config.js'
import type { ValueDecl } from '../model/ir.js'
import type { Tensor } from '../model/tensor.js'
import { TextEncoder } from '../model/tokenize.js'
import type { NativeReadOptions } from '../native/binding.js'
import { binding } from '../native/binding.js'
import { readElasticPackage, shardBlobName, type ElasticPackage } from '../package/elastic-manifest.js'
import { fullModelPlan } from '../plan/elastic/full-model.js'
import { planElastic, planLoadAndExec, planPreloadModel, planStdPL, stagingWindow, type ElasticPlan, type ElasticProfile, type RankedImportance } from '../plan/elastic/index.js'
import { LatencyController, type Decision } from '../plan/elastic/latency-controller.js'
import type { RunPlan } from '../plan/elastic/elastic-layout.js'
import { computeFor, findDeviceProfile, plannerProfile, profileKey } from '../profile/elastic-device.js'
import { rankedImportance } from '../profile/importance.js'
import { checkElasticOptions, type CheckedElasticOptions, type ElasticOpenOptions } from './elastic-options.js'
import type { ExecutionPlan } from '../plan/execution-plan.js'
import { EngineBase, type Computed, type EngineStats, type TracedRun } from './engine-base.js'
import { ElasticRunner, type RunTimes } from './elastic-runner.js'
import { classifyTexts, type Classification } from './text-classify.js'

export { measuredAccuracy } from '../profile/importance.js'
export type { ElasticOpenOptions } from './elastic-options.js'
export type { Classification } from './text-classify.js'

export interface ElasticStats extends EngineStats {
  readonly plan: ElasticPlan
  /** The p95-or-p90 / modelled ratio the plan allows for (calibration jitter, then online). */
  readonly latencyFactor: number
  /** The measured latencies say T cannot be met even by the smallest plan: the plan in force stays. */
  readonly targetAtRisk: boolean
  readonly residentParameterBytes: number
  readonly preloadBytes: number
  readonly stagingBytes: number
  readonly importance: 'profiled' | 'layer order'
  /**
   * Per sequence-length bucket (inputs of up to `seq` tokens run its plan, padded to `seq`): its sub-model
   * and modelled time, once a plan was made for it. The last is the engine's `seq` (its plan is `plan`).
   */
  readonly seqBuckets: ReadonlyArray<{ readonly seq: number; readonly depth?: number; readonly width?: number; readonly modelledMs?: number }>
}

/**
 * A sequence-length bucket below the engine's `seq` (issue 37, "deadlines see the real length"): the
 * device profile's compute delays at its ceiling give it a plan of its own, so a short message gets a
 * larger sub-model than a long one under the same target. Its latency controller learns its own factor.
 */
interface SeqBucket {
  readonly seq: number
  readonly planning: Planning
  /** Made at the bucket's first inference, starting from the top bucket's factor. */
  controller: LatencyController<ElasticPlan> | undefined
  /** Its plan for the target, preload buffer and factor in force; undefined until needed. */
  plan: ElasticPlan | undefined
}

/** What planning at a target needs: the device profile, the importance, the embedding read. */
interface Planning {
  readonly profile: ElasticProfile
  readonly importance: RankedImportance
  readonly embeddingIoMs: number
  readonly jitter: number
}

export class ElasticEngine extends EngineBase {
  readonly kind = 'elastic' as const
  private readonly runner: ElasticRunner
  private current!: ElasticPlan
  private target: number | undefined
  private preload: number
  private readonly controller: LatencyController<ElasticPlan> | undefined
  /** The buckets below `seq`, shortest first (none without a target or with one profiled length). */
  private readonly lower: SeqBucket[]

  private constructor(
    readonly path: string,
    private readonly pkg: ElasticPackage,
    private readonly encoder: TextEncoder,
    private readonly opts: ElasticOpenOptions & CheckedElasticOptions,
    readonly seq: number,
    private readonly planning: Planning | undefined,
    private readonly importanceKind: 'profiled' | 'layer order',
    lower: ReadonlyArray<{ readonly seq: number; readonly planning: Planning }> = [],
  ) {
    const decls: ValueDecl[] = [
      { name: 'input_ids', dtype: 'int64', dims: [1, 'sequence'] },
      { name: 'attention_mask', dtype: 'int64', dims: [1, 'sequence'] },
    ]
    super(decls, [{ name: 'logits', dtype: 'float32', dims: [1, pkg.config.labels.length] }], { threads: opts.threads, io: opts.io })
    // PreloadModel keeps the whole model in memory, the word embeddings included.
    const embeddings = opts.planner === 'preload-model' ? 'resident' : 'on-demand'
    this.runner = new ElasticRunner(path, pkg.config, pkg.blobs, this.executor('open'), { embeddings })
    this.target = opts.targetLatencyMs
    this.preload = opts.preloadBytes
    this.controller = planning !== undefined && opts.adaptive ? new LatencyController(planning.jitter, sameShards) : undefined
    this.lower = lower.map((b) => ({ ...b, controller: undefined, plan: undefined }))
  }

  /**
   * Opens an elastic package. With `targetLatencyMs` the plan is made from the device profile the
   * package holds for this machine (or `deviceProfile`); without it, the full model runs.
   */
  static async open(path: string, options: ElasticOpenOptions = {}): Promise<ElasticEngine> {
    const o = { ...options, ...checkElasticOptions(options, path) }
    const pkg = await readElasticPackage(path)
    const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
    const seq = o.seq ?? encoder.maxLength
    if (!(Number.isInteger(seq) && seq >= 2 && seq <= pkg.config.maxPositions)) throw new ArgumentError(`seq: expected an integer in 2..${pkg.config.maxPositions}, got ${String(seq)}`)
    const bitwidths = (pkg.meta.bitwidths as number[] | undefined) ?? []
    const { importance, profiled } = rankedImportance(pkg.meta, pkg.config, bitwidths)
    let planning: Planning | undefined
    const lower: Array<{ seq: number; planning: Planning }> = []
    if (o.targetLatencyMs !== undefined) {
      const device = o.deviceProfile ?? findDeviceProfile(pkg.meta.deviceProfiles, profileKey(binding().info().isa, o.threads, o.direct, o.bandwidth, pkg.digest), path)
      const planningAt = (ceiling: number): Planning => ({
        profile: plannerProfile(pkg.config, pkg.blobs, device, ceiling, bitwidths),
        importance,
        // With on-demand embeddings both lanes start after the embedding read (PreloadModel keeps the table resident).
        embeddingIoMs: o.planner === 'preload-model' ? 0 : (computeFor(device, ceiling)?.embeddingIoMs ?? 0) * (device.calibration?.scale ?? 1),
        jitter: device.calibration?.jitter ?? 1,
      })
      planning = planningAt(seq)
      // every length the device profile has compute delays for, below seq, is a bucket of its own
      for (const s of [...new Set(device.compute.map((c) => c.seq))].filter((s) => s >= 2 && s < seq).sort((a, b) => a - b)) lower.push({ seq: s, planning: planningAt(s) })
    }
    const engine = new ElasticEngine(path, pkg, encoder, o, seq, planning, profiled ? 'profiled' : 'layer order', lower)
    try {
      engine.current = engine.makePlan(engine.target, engine.preload)
      await engine.applyPlan(engine.current)
      if (engine.controller !== undefined) {
        await engine.calibrateAtOpen(o.openCalibrationRuns)
        engine.prepareNeighbours()
      }
    } catch (err) {
      await engine.close()
      throw err
    }
    return engine
  }

  /** The plan in force for inputs of up to `seq` tokens (shorter ones may run their bucket's: planForLength). */
  get plan(): ElasticPlan {
    return this.current
  }

  /** The plan an input of `tokens` tokens runs: its sequence-length bucket's (made now if it is not yet). */
  planForLength(tokens: number): ElasticPlan {
    if (!(Number.isInteger(tokens) && tokens >= 1 && tokens <= this.seq)) throw new ArgumentError(`planForLength: expected an integer in 1..${this.seq}, got ${String(tokens)}`)
    const b = this.bucketFor(tokens)
    return b === undefined ? this.current : this.bucketPlan(b)
  }

  get labels(): readonly string[] {
    return this.pkg.config.labels
  }

  /** The full model's shape: layers, heads, hidden size, vocabulary, labels. */
  get config(): EncoderConfig {
    return this.pkg.config
  }

  /** The target latency in ms, or undefined when the engine runs the full model. */
  get targetLatencyMs(): number | undefined {
    return this.target
  }

  /**
   * The smallest target latency the planner meets now (with the preload buffer in force and the factor
   * the plans aim with), or undefined for an engine opened without a target. The latency controller may
   * raise it as it measures the device.
   */
  get minimumTargetMs(): number | undefined {
    if (this.planning === undefined) return undefined
    try {
      this.makePlan(Number.MIN_VALUE, this.preload)
    } catch (err) {
      if (err instanceof LatencyTargetError) return err.minimumMs
      throw err
    }
    return 0
  }

  /** Re-plans for a new target latency (queued after running inferences). Rejects if infeasible; the old plan stays. */
  setTargetLatency(ms: number): Promise<ElasticPlan> {
    if (typeof ms !== 'number' || !(ms > 0) || !Number.isFinite(ms)) return Promise.reject(new ArgumentError(`setTargetLatency: expected a positive number of milliseconds, got ${String(ms)}`))
    if (this.planning === undefined) return Promise.reject(new ArgumentError('setTargetLatency: the engine was opened without targetLatencyMs and runs the full model; open it with a target to plan for one'))
    return this.replan(ms, this.preload)
  }

  /** Resizes the preload buffer and re-plans (queued). */
  setPreloadBytes(bytes: number): Promise<ElasticPlan> {
    if (!(Number.isSafeInteger(bytes) && bytes >= 0)) return Promise.reject(new ArgumentError(`setPreloadBytes: expected a non-negative integer, got ${String(bytes)}`))
    return this.replan(this.target, bytes)
  }

  /** Tokenizes and classifies each text (one inference per text, queued; text-classify.ts). */
  classify(texts: string | readonly string[]): Promise<Classification[]> {
    return classifyTexts(texts, this.encoder, this.seq, this.pkg.config.labels, (ids) => this.inferIds(ids))
  }

  /** Runs the plan on token ids (special tokens included, at most `seq`). */
  inferIds(ids: readonly number[]): Promise<{ logits: Float32Array; times: RunTimes }> {
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > this.seq) {
      return Promise.reject(new ArgumentError(`inferIds: expected 1..${this.seq} token ids, got ${Array.isArray(ids) ? ids.length : typeof ids}`))
    }
    try {
      this.executor('infer')
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(() => this.runIds(ids))
  }

  stats(): ElasticStats {
    const s = this.runner.stats
    return {
      ...this.sessionStats(),
      plan: this.current,
      latencyFactor: this.controller?.factor ?? Math.max(1, this.planning?.jitter ?? 1),
      targetAtRisk: this.controller?.atRisk ?? false,
      residentParameterBytes: this.runner.residentParameterBytes,
      preloadBytes: s.preloadBytes,
      stagingBytes: s.stagingBytes,
      importance: this.importanceKind,
      seqBuckets: [
        ...this.lower.map((b) => (b.plan === undefined ? { seq: b.seq } : { seq: b.seq, depth: b.plan.depth, width: b.plan.width, modelledMs: b.plan.modelledMs })),
        { seq: this.seq, depth: this.current.depth, width: this.current.width, modelledMs: this.current.modelledMs },
      ],
    }
  }

  /** infer(): input_ids and attention_mask [1, n], n <= seq; the tokens whose mask is 0 are left out. */
  protected async compute(tensors: Tensor[], profile: boolean): Promise<Computed> {
    const [idsT, maskT] = tensors as [Tensor, Tensor]
    const n = idsT.dims[1]!
    if (n < 1 || n > this.seq) throw new InputError(`input 'input_ids': expected 1..${this.seq} tokens (the plan's sequence length), got ${n}`)
    const ids: number[] = []
    for (let i = 0; i < n; i++) if ((maskT.data as BigInt64Array)[i] !== 0n) ids.push(Number((idsT.data as BigInt64Array)[i]))
    if (ids.length === 0) throw new InputError("input 'attention_mask': selects no token")
    const { logits, run } = await this.runIds(ids)
    const outputs = { logits: { dtype: 'float32' as const, dims: [1, logits.length], data: logits } }
    const opMs = run.report.opMs
    if (!profile || opMs === undefined) return { outputs }
    const exec = run.plan
    return { outputs, ops: exec.opNodes.map((node, i) => ({ node, opType: exec.opKinds[i]!.opType, native: exec.opKinds[i]!.native, ms: opMs[i]! })), run }
  }

  protected async planOf(): Promise<ExecutionPlan> {
    const exec = this.runner.execution
    if (exec === undefined) throw new Error('elastic engine: no plan is applied')
    return exec
  }

  /** Runs the plan of the ids' sequence-length bucket (applied first when another bucket's is in force). */
  private async runIds(ids: readonly number[]): Promise<{ logits: Float32Array; times: RunTimes; run: TracedRun }> {
    this.executor('infer')
    const b = this.bucketFor(ids.length)
    await this.runner.use(b === undefined ? this.runPlan(this.current) : this.runPlan(this.bucketPlan(b), b.seq))
    const r = await this.runner.run(ids, this.readOptions())
    if (b === undefined) this.observe(r.times.totalMs)
    else this.observeBucket(b, r.times.totalMs)
    return r
  }

  /** The bucket below `seq` whose ceiling is the smallest at or above `tokens`; undefined: the top one. */
  private bucketFor(tokens: number): SeqBucket | undefined {
    return this.lower.find((b) => tokens <= b.seq)
  }

  /** A lower bucket's plan, made at its factor when it has none. */
  private bucketPlan(b: SeqBucket): ElasticPlan {
    if (b.plan !== undefined) return b.plan
    let plan: ElasticPlan
    try {
      plan = this.makePlan(this.target, this.preload, Infinity, b.controller?.factor ?? this.controller?.factor ?? b.planning.jitter, b.planning)
    } catch (err) {
      if (!(err instanceof LatencyTargetError)) throw err
      plan = this.current // the top plan meets T at every shorter length
    }
    return (b.plan = this.samePreloadAsTop(plan))
  }

  /**
   * The preload buffer holds one set of shards: a bucket plan that would preload others runs the top
   * plan's sub-model instead (it meets T at a shorter length too), so that changing buckets never reads
   * preloaded shards again.
   */
  private samePreloadAsTop(plan: ElasticPlan): ElasticPlan {
    if (this.preload === 0 || plan === this.current) return plan
    const key = (p: ElasticPlan): string => p.preload.map((e) => `${e.layer}.${e.shard}@${e.bits}`).sort().join(',')
    return key(plan) === key(this.current) ? plan : this.current
  }

  /** Hands an inference's time to the latency controller and carries out its decision. */
  private observe(totalMs: number): void {
    const c = this.controller
    const target = this.target
    if (c === undefined || target === undefined) return
    this.follow(c.observe(totalMs, this.current, target, (f, below) => this.makePlan(target, this.preload, below, f)))
  }

  /** A lower bucket's inference: its own controller decides; a switch is applied by the bucket's next inference. */
  private observeBucket(b: SeqBucket, totalMs: number): void {
    const target = this.target
    if (this.controller === undefined || target === undefined || b.plan === undefined) return
    b.controller ??= new LatencyController(this.controller.factor, sameShards)
    const d = b.controller.observe(totalMs, b.plan, target, (f, below) => this.makePlan(target, this.preload, below, f, b.planning))
    if (d.kind !== 'keep') b.plan = this.samePreloadAsTop(d.plan)
  }

  private replan(target: number | undefined, preload: number): Promise<ElasticPlan> {
    try {
      this.executor('re-plan')
    } catch (err) {
      return Promise.reject(err)
    }
    return this.queue.push(async () => {
      const plan = this.makePlan(target, preload)
      this.controller?.reset()
      await this.applyPlan(plan)
      this.current = plan
      this.target = target
      this.preload = preload
      for (const b of this.lower) {
        b.controller?.reset()
        b.plan = undefined
      }
      this.prepareNeighbours()
      return plan
    })
  }

  /**
   * Carries out the controller's decision. A switch is applied by a task queued now, so it runs before
   * any inference the caller starts after this one returns, and the caller's promise does not wait for
   * it. No warm-up run: the arena keeps its pages across a re-plan (native/alloc/arena.cc) and a plan run
   * before keeps its layout, so the next inference pays only for pages the new plan adds.
   */
  private follow(d: Decision<ElasticPlan>): void {
    if (d.kind === 'adopt') this.current = d.plan
    if (d.kind !== 'switch') return
    void this.queue
      .push(async () => {
        await this.runner.apply(this.runPlan(d.plan))
        this.current = d.plan
      })
      .catch(() => undefined) // the plan in force stays; the next inference reports a broken session
  }

  /**
   * Builds the layouts of the plans the controller is likeliest to move to. A re-plan to a plan whose
   * program is not built costs the next inference the build (about 3 ms here), which at T = 10 ms can
   * be a miss by itself. Each new layout costs 0.5-1 MB of RSS here (its program, and the V8 heap its
   * build's garbage touches), hence only these few; factors that give the same plan share a layout.
   */
  private prepareNeighbours(): void {
    for (const b of this.lower) this.runner.prepare(this.runPlan(this.bucketPlan(b), b.seq))
    if (this.controller === undefined) return
    for (const f of this.controller.neighbours()) {
      let plan: ElasticPlan
      try {
        plan = this.makePlan(this.target, this.preload, Infinity, f)
      } catch {
        continue // infeasible at this factor
      }
      this.runner.prepare(this.runPlan(plan))
    }
  }

  /** Reads as the caller configured them (cold with O_DIRECT, throttled). */
  private readOptions(): NativeReadOptions {
    return { direct: this.opts.direct, ...(this.opts.bandwidth ? { bandwidth: this.opts.bandwidth } : {}) }
  }

  /**
   * Open-time calibration (latency-controller.ts `calibrate`): `runs` inferences of the plan just
   * applied, on seq distinct tokens spread over the vocabulary (the on-demand embedding read touches
   * the most pages), with the configured IO; re-plans while their median ratio is outside the band
   * (at most three rounds).
   */
  private async calibrateAtOpen(runs: number): Promise<void> {
    const c = this.controller
    if (runs === 0 || c === undefined) return
    await this.calibrateAt(runs, this.seq, c, () => this.current, (p) => (this.current = p), this.planning)
    // Each lower bucket learns its own factor, from the top's, on inputs of its ceiling's length.
    for (const b of this.lower) {
      b.controller = new LatencyController(c.factor, sameShards)
      b.plan = undefined
      await this.calibrateAt(runs, b.seq, b.controller, () => this.bucketPlan(b), (p) => (b.plan = this.samePreloadAsTop(p)), b.planning)
    }
    await this.runner.use(this.runPlan(this.current))
  }

  /** Open-time calibration of one bucket's plan on `length` distinct tokens (at most three rounds). */
  private async calibrateAt(runs: number, length: number, c: LatencyController<ElasticPlan>, get: () => ElasticPlan, set: (p: ElasticPlan) => void, planning: Planning | undefined): Promise<void> {
    const vocab = this.pkg.config.vocab
    const ids = Array.from({ length }, (_, i) => Math.floor((i * (vocab - 1)) / Math.max(1, length - 1)))
    for (let round = 0; round < 3; round++) {
      const plan = get()
      await this.runner.use(this.runPlan(plan, length))
      await this.runner.run([0, 0], { direct: false }) // first-touch pages and JIT out of the figures
      const ratios: number[] = []
      for (let i = 0; i < runs; i++) ratios.push((await this.runner.run(ids, this.readOptions())).times.totalMs / plan.modelledMs)
      const d = c.calibrate(ratios, plan, (f) => this.makePlan(this.target, this.preload, Infinity, f, planning))
      if (d.kind === 'keep') return
      set(d.plan)
      if (d.kind === 'adopt') return
    }
  }

  /**
   * Applies a plan and runs it once on a two-token input (buffered reads), so the first inference the
   * caller times does not pay for first-touch page faults in the new arena and JIT warm-up.
   */
  private async applyPlan(plan: ElasticPlan): Promise<void> {
    await this.runner.apply(this.runPlan(plan))
    await this.runner.run([0, 0], { direct: false })
  }

  /** The runner's plan: the planner's shard versions and the smallest staging ring that keeps its timing. */
  private runPlan(plan: ElasticPlan, seq = this.seq): RunPlan {
    const planning = seq === this.seq ? this.planning : this.lower.find((b) => b.seq === seq)?.planning
    return { ...toRunPlan(plan, seq), ...(planning === undefined ? {} : { window: stagingWindow(planning.profile, plan) }) }
  }

  /**
   * Plans for T (undefined: the full model). The device profile's calibration says how much real
   * inferences jitter: the planners aim at T * min(1, 1.05 / factor), so that 95% finish within 1.05 T.
   * With on-demand embeddings both lanes start after the embedding read (e ms): the planners get that
   * aim minus e, and the plan's modelled time gets e back. `belowMs`: the plan's modelled time must stay
   * under it (a ceiling from a failed trial).
   */
  private makePlan(targetMs: number | undefined, preloadBytes: number, belowMs = Infinity, factor = this.controller?.factor ?? this.planning?.jitter ?? 1, planning = this.planning): ElasticPlan {
    const p = planning
    if (targetMs === undefined || p === undefined) {
      const c = this.pkg.config
      const bits = 32
      return fullModelPlan(c.layers, c.heads, bits, (l, h) => this.pkg.blobs.get(shardBlobName(l, h, bits))?.paddedLength ?? 0, preloadBytes)
    }
    const planner = this.opts.planner
    const bits = this.opts.plannerBits ?? 32
    const e = p.embeddingIoMs
    // The aim never passes 1.05 T in modelled time, even when inferences run faster than modelled:
    // the model's errors are partly fixed costs (the worst-case embedding read), so a small plan's
    // low ratio does not carry over to a larger plan (allowing it grew plans that then missed T).
    const aim = Math.min(1, 1.05 / factor)
    // A target the embedding read alone exceeds still goes to the planner (as the least positive
    // target), so its error names the minimum of the same planner, preload bits and accuracy table.
    const t = Math.max(Math.min(targetMs * aim, belowMs * (1 - 1e-9)) - e, Number.MIN_VALUE)
    let plan: ElasticPlan
    try {
      if (planner === 'flexpipe') plan = planElastic(p.profile, p.importance, { targetMs: t, preloadBytes, ...(this.opts.preloadBits ? { preloadBits: this.opts.preloadBits } : {}) })
      else if (planner === 'load-and-exec') plan = planLoadAndExec(p.profile, { targetMs: t })
      else if (planner === 'stdpl') plan = planStdPL(p.profile, { targetMs: t, bits })
      else plan = planPreloadModel(p.profile, { targetMs: t, bits })
    } catch (err) {
      if (err instanceof LatencyTargetError) {
        const minimum = Math.ceil(((err.minimumMs + e) / aim) * 1000) / 1000
        throw new LatencyTargetError('an elastic sub-model', targetMs, minimum, err.minimumPreloadBytes)
      }
      throw err
    }
    return { ...plan, targetMs, modelledMs: plan.modelledMs + e }
  }
}

/** Same sub-model, shard versions and preload set (the runner would run the same thing). */
function sameShards(a: ElasticPlan, b: ElasticPlan): boolean {
  if (a.depth !== b.depth || a.width !== b.width) return false
  return a.shards.every((row, k) => row.every((s, j) => s.bits === b.shards[k]![j]!.bits && s.preloaded === b.shards[k]![j]!.preloaded))
}

/** The runner's view of a planner's plan. */
export function toRunPlan(plan: ElasticPlan, seq: number): RunPlan {
  return {
    depth: plan.depth,
    width: plan.width,
    seq,
    bits: plan.shards.map((row) => row.map((s) => s.bits)),
    preloaded: plan.shards.map((row) => row.map((s) => s.preloaded)),
    schedule: plan.schedule,
  }
}
