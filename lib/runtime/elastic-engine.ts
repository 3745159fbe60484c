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

  private constructor(
    readonly path: string,
    private readonly pkg: ElasticPackage,
    private readonly encoder: TextEncoder,
    private readonly opts: ElasticOpenOptions & CheckedElasticOptions,
    readonly seq: number,
    private readonly planning: Planning | undefined,
    private readonly importanceKind: 'profiled' | 'layer order',
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
    if (o.targetLatencyMs !== undefined) {
      const device = o.deviceProfile ?? findDeviceProfile(pkg.meta.deviceProfiles, profileKey(binding().info().isa, o.threads, o.direct, o.bandwidth, pkg.digest), path)
      const profile = plannerProfile(pkg.config, pkg.blobs, device, seq, bitwidths)
      // With on-demand embeddings both lanes start after the embedding read (PreloadModel keeps the table resident).
      const embeddingIoMs = o.planner === 'preload-model' ? 0 : (computeFor(device, seq)?.embeddingIoMs ?? 0) * (device.calibration?.scale ?? 1)
      planning = { profile, importance, embeddingIoMs, jitter: device.calibration?.jitter ?? 1 }
    }
    const engine = new ElasticEngine(path, pkg, encoder, o, seq, planning, profiled ? 'profiled' : 'layer order')
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

  /** The plan in force. */
  get plan(): ElasticPlan {
    return this.current
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
    const opMs = profile ? new Float64Array(this.runner.ranges?.ops ?? 0) : undefined
    const { logits, run } = await this.runIds(ids, opMs)
    const outputs = { logits: { dtype: 'float32' as const, dims: [1, logits.length], data: logits } }
    if (opMs === undefined) return { outputs }
    const exec = run.plan
    return { outputs, ops: exec.opNodes.map((node, i) => ({ node, opType: exec.opKinds[i]!.opType, native: exec.opKinds[i]!.native, ms: opMs[i]! })), run }
  }

  protected async planOf(): Promise<ExecutionPlan> {
    const exec = this.runner.execution
    if (exec === undefined) throw new Error('elastic engine: no plan is applied')
    return exec
  }

  private async runIds(ids: readonly number[], opMs?: Float64Array): Promise<{ logits: Float32Array; times: RunTimes; run: TracedRun }> {
    this.executor('infer')
    const r = await this.runner.run(ids, this.readOptions(), opMs)
    this.observe(r.times.totalMs)
    return r
  }

  /** Hands an inference's time to the latency controller and carries out its decision. */
  private observe(totalMs: number): void {
    const c = this.controller
    const target = this.target
    if (c === undefined || target === undefined) return
    this.follow(c.observe(totalMs, this.current, target, (f, below) => this.makePlan(target, this.preload, below, f)))
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
    const vocab = this.pkg.config.vocab
    const ids = Array.from({ length: this.seq }, (_, i) => Math.floor((i * (vocab - 1)) / Math.max(1, this.seq - 1)))
    for (let round = 0; round < 3; round++) {
      const ratios: number[] = []
      for (let i = 0; i < runs; i++) ratios.push((await this.runner.run(ids, this.readOptions())).times.totalMs / this.current.modelledMs)
      const d = c.calibrate(ratios, this.current, (f) => this.makePlan(this.target, this.preload, Infinity, f))
      if (d.kind === 'adopt') this.current = d.plan
      if (d.kind !== 'switch') return
      await this.applyPlan(d.plan)
      this.current = d.plan
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
  private runPlan(plan: ElasticPlan): RunPlan {
    return { ...toRunPlan(plan, this.seq), ...(this.planning === undefined ? {} : { window: stagingWindow(this.planning.profile, plan) }) }
  }

  /**
   * Plans for T (undefined: the full model). The device profile's calibration says how much real
   * inferences jitter: the planners aim at T * min(1, 1.05 / factor), so that 95% finish within 1.05 T.
   * With on-demand embeddings both lanes start after the embedding read (e ms): the planners get that
   * aim minus e, and the plan's modelled time gets e back. `belowMs`: the plan's modelled time must stay
   * under it (a ceiling from a failed trial).
   */
  private makePlan(targetMs: number | undefined, preloadBytes: number, belowMs = Infinity, factor = this.controller?.factor ?? this.planning?.jitter ?? 1): ElasticPlan {
    const p = this.planning
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
