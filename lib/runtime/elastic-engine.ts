// SPDX-License-Identifier: Apache-2.0
// ElasticEngine: a transformer classifier that answers within a target latency from cold storage
// (the STI seed): plan (lib/plan/elastic: compute planning, accumulated IO budgets, shard versions by
// importance, the preload buffer) from this device's profile, then run the plan's layer-wise
// IO/compute pipeline (executor.ts) on every call.
//
//   const engine = await openElastic('spam.fpk', { targetLatencyMs: 40, preloadBytes: 1 << 20 })
//   const [r] = await engine.classify('WIN A FREE CRUISE ...')   // { label: 'spam', score, ... }
//   await engine.setTargetLatency(25)                              // re-plans
import { availableParallelism } from 'node:os'
import { ArgumentError, DisposedError, LatencyTargetError, PackageError } from '../errors.js'
import { PackageReader, type BlobEntry } from '../package/index.js'
import {
  planElastic,
  planLoadAndExec,
  planPreloadModel,
  planStdPL,
  stagingWindow,
  type ElasticPlan,
  type ElasticPlanner,
  type ElasticProfile,
  type MeasuredAccuracy,
  type RankedImportance,
  type ShardRef,
} from '../plan/elastic/index.js'
import { isFiniteGrid } from '../plan/elastic/profile.js'
import { SerialQueue } from './serial-queue.js'
import { computeFor, findDeviceProfile, plannerProfile, profileKey, type DeviceProfile } from '../profile/elastic-device.js'
import { onlineCalibration, openFactor, replanFactor } from '../plan/elastic/online-calibration.js'
import { parseEncoderConfig, type EncoderConfig } from '../model/encoder-config.js'
import { ElasticExecutor, type RunPlan, type RunTimes } from './elastic-executor.js'
import type { NativeReadOptions } from '../native/binding.js'
import { TextEncoder } from '../model/tokenize.js'
import { crc32 } from '../package/index.js'

export interface ElasticOpenOptions {
  /** T: each inference should finish within this many ms (required). */
  readonly targetLatencyMs: number
  /** P: bytes of the preload buffer kept across calls (default 0). */
  readonly preloadBytes?: number
  /** Bitwidth preloaded shards are held in (default: the highest quantized bitwidth). */
  readonly preloadBits?: number
  /** Threads (default: cores, at most 4). The device profile must have been measured with it. */
  readonly threads?: number
  readonly io?: 'auto' | 'uring' | 'pread'
  /** Cold reads with O_DIRECT (default true). */
  readonly direct?: boolean
  /** Emulated storage bandwidth in bytes/s (a throttle), e.g. 257e6; the profile must match it. */
  readonly bandwidth?: number
  /** Sequence length the plan is made for; inputs are padded to it (default: the tokenizer's max_length). */
  readonly seq?: number
  /** The planning algorithm: flexpipe's (default) or a baseline of the seed's evaluation. */
  readonly planner?: ElasticPlanner
  /** The one bitwidth of the 'stdpl' and 'preload-model' baselines. */
  readonly plannerBits?: number
  /** Use this profile instead of the package's (benchmarks). */
  readonly deviceProfile?: DeviceProfile
  /**
   * Keep the latency promise honest at run time (default true): the engine tracks measured / modelled
   * time of its recent inferences (recent median x p95/median spread, online-calibration.ts) and, when
   * that would put inferences past 1.05 T (or leaves much room), re-plans with it in place of the
   * profile's calibration jitter.
   */
  readonly adaptive?: boolean
  /**
   * With `adaptive`: how many inferences open runs on a worst-case input (seq distinct tokens) with
   * the IO as configured, to check the plan against the device as it is now rather than when it was
   * profiled (default 4; 0: none). When their median measured / modelled time is outside what the plan allows
   * for, open re-plans and measures again (at most three rounds) before it returns.
   */
  readonly openCalibrationRuns?: number
}

export interface Classification {
  readonly label: string
  readonly index: number
  /** Softmax probability of the label. */
  readonly score: number
  readonly scores: readonly number[]
  readonly logits: readonly number[]
  /** Tokens fed (special tokens included) and whether the text was truncated to fit. */
  readonly tokens: number
  readonly truncated: boolean
  /** Wall time of the model run (tokenization excluded). */
  readonly ms: number
}

export interface ElasticStats {
  readonly plan: ElasticPlan
  /** The p95-or-p90 / modelled ratio the plan allows for (calibration jitter, then online). */
  readonly latencyFactor: number
  /** The measured latencies say T cannot be met even by the smallest plan: the plan in force stays. */
  readonly targetAtRisk: boolean
  readonly residentParameterBytes: number
  readonly preloadBytes: number
  readonly stagingBytes: number
  readonly arenaBytes: number
  readonly bytesRead: number
  readonly threads: number
  readonly reader: string
  readonly importance: 'profiled' | 'layer order'
}

function checkOptions(o: ElasticOpenOptions): Required<Pick<ElasticOpenOptions, 'preloadBytes' | 'threads' | 'io' | 'direct'>> {
  if (o === null || typeof o !== 'object') throw new ArgumentError('options: expected an object with targetLatencyMs')
  const t = o.targetLatencyMs
  if (typeof t !== 'number' || !(t > 0) || !Number.isFinite(t)) throw new ArgumentError(`targetLatencyMs: expected a positive number of milliseconds, got ${String(t)}`)
  const p = o.preloadBytes ?? 0
  if (!(Number.isSafeInteger(p) && p >= 0)) throw new ArgumentError(`preloadBytes: expected a non-negative integer, got ${String(p)}`)
  const threads = o.threads ?? Math.min(4, availableParallelism())
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= 256)) throw new ArgumentError(`threads: expected an integer in 1..256, got ${String(threads)}`)
  if (o.bandwidth !== undefined && !(o.bandwidth > 0 && Number.isFinite(o.bandwidth))) throw new ArgumentError(`bandwidth: expected bytes per second > 0, got ${String(o.bandwidth)}`)
  const c = o.openCalibrationRuns
  if (c !== undefined && !(Number.isInteger(c) && c >= 0 && c <= 64)) throw new ArgumentError(`openCalibrationRuns: expected an integer in 0..64, got ${String(c)}`)
  return { preloadBytes: p, threads, io: o.io ?? 'auto', direct: o.direct ?? true }
}

/** The CRC digest of a package's shard blobs (identifies the content a device profile was measured on). */
export function shardDigest(blobs: readonly BlobEntry[]): string {
  const crcs = new Uint32Array(blobs.filter((b) => b.kind === 'shard').map((b) => b.crc32))
  return crc32(new Uint8Array(crcs.buffer)).toString(16).padStart(8, '0')
}

export interface ElasticPackage {
  readonly config: EncoderConfig
  readonly tokenizer: unknown
  readonly blobs: Map<string, BlobEntry>
  readonly meta: Readonly<Record<string, unknown>>
  readonly digest: string
}

/** Reads and checks an elastic package's manifest. */
export async function readElasticPackage(path: string): Promise<ElasticPackage> {
  const reader = await PackageReader.open(path)
  try {
    const { meta, graph, blobs } = reader.manifest
    if (meta.kind !== 'flexpipe-elastic') {
      throw new ArgumentError(
        `package ${path} has no elastic shards (meta.kind ${JSON.stringify(meta.kind)}): targetLatencyMs needs a transformer prepared with \`flexpipe prepare --elastic <model folder>\`; open it with memoryBudget instead`,
      )
    }
    const g = graph as { kind?: unknown; config?: unknown; tokenizer?: unknown }
    if (g === null || typeof g !== 'object' || g.kind !== 'elastic-encoder') throw new PackageError(`package ${path}: the elastic graph is missing; re-run flexpipe prepare --elastic`)
    const config = parseEncoderConfig(g.config, `package ${path}`)
    return { config, tokenizer: g.tokenizer, blobs: new Map(blobs.map((b) => [b.name, b])), meta, digest: shardDigest(blobs) }
  } finally {
    await reader.close()
  }
}

export class ElasticEngine {
  private x: ElasticExecutor | undefined
  private readonly queue = new SerialQueue()
  private current: ElasticPlan
  private target: number
  private preload: number

  private constructor(
    readonly path: string,
    private readonly pkg: ElasticPackage,
    private readonly encoder: TextEncoder,
    private readonly profile: ElasticProfile,
    private readonly importance: RankedImportance,
    private readonly importanceKind: 'profiled' | 'layer order',
    private readonly opts: ElasticOpenOptions & ReturnType<typeof checkOptions>,
    readonly seq: number,
    x: ElasticExecutor,
    private readonly embeddingIoMs: number,
    private readonly jitter: number,
  ) {
    this.x = x
    this.target = opts.targetLatencyMs
    this.preload = opts.preloadBytes
    this.current = this.makePlan(this.target, this.preload)
  }

  static async open(path: string, options: ElasticOpenOptions): Promise<ElasticEngine> {
    const o = { ...options, ...checkOptions(options) }
    const pkg = await readElasticPackage(path)
    const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
    const seq = o.seq ?? encoder.maxLength
    if (!(Number.isInteger(seq) && seq >= 2 && seq <= pkg.config.maxPositions)) throw new ArgumentError(`seq: expected an integer in 2..${pkg.config.maxPositions}, got ${String(seq)}`)
    const bitwidths = (pkg.meta.bitwidths as number[] | undefined) ?? []
    const device = o.deviceProfile ?? findDeviceProfile(pkg.meta.deviceProfiles, profileKey(o.threads, o.direct, o.bandwidth, pkg.digest), path)
    const profile = plannerProfile(pkg.config, pkg.blobs, device, seq, bitwidths)
    const imp = pkg.meta.importance as { ranking?: Array<[number, number]> } | undefined
    const ranking = Array.isArray(imp?.ranking) ? imp!.ranking.map(([layer, shard]) => ({ layer, shard })) : undefined
    const accuracy = measuredAccuracy(pkg.meta.importance, pkg.config.layers, pkg.config.heads, bitwidths)
    const importance: RankedImportance = { ranking: ranking ?? layerOrder(pkg.config), ...(ranking && accuracy ? { accuracy } : {}) }
    // PreloadModel keeps the whole model in memory, the word embeddings included.
    const embeddings = o.planner === 'preload-model' ? 'resident' : 'on-demand'
    const x = await ElasticExecutor.open(path, pkg.config, pkg.blobs, { threads: o.threads, io: o.io, embeddings })
    const embeddingIoMs = x.onDemand ? (computeFor(device, seq)?.embeddingIoMs ?? 0) * (device.calibration?.scale ?? 1) : 0
    const jitter = device.calibration?.jitter ?? 1
    let engine: ElasticEngine
    try {
      engine = new ElasticEngine(path, pkg, encoder, profile, importance, ranking ? 'profiled' : 'layer order', o, seq, x, embeddingIoMs, jitter)
      await engine.applyPlan(engine.current)
      if (o.adaptive !== false) {
        await engine.calibrateAtOpen(o.openCalibrationRuns ?? 4)
        engine.prepareNeighbours()
      }
    } catch (err) {
      x.dispose()
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

  /** Re-plans for a new target latency (queued after running inferences). Rejects if infeasible; the old plan stays. */
  setTargetLatency(ms: number): Promise<ElasticPlan> {
    if (typeof ms !== 'number' || !(ms > 0) || !Number.isFinite(ms)) return Promise.reject(new ArgumentError(`setTargetLatency: expected a positive number of milliseconds, got ${String(ms)}`))
    return this.queue.push(async () => {
      const plan = this.makePlan(ms, this.preload)
      this.resetTrials()
      await this.applyPlan(plan)
      this.current = plan
      this.target = ms
      if (this.opts.adaptive !== false) this.prepareNeighbours()
      return plan
    })
  }

  /** Resizes the preload buffer and re-plans (queued). */
  setPreloadBytes(bytes: number): Promise<ElasticPlan> {
    if (!(Number.isSafeInteger(bytes) && bytes >= 0)) return Promise.reject(new ArgumentError(`setPreloadBytes: expected a non-negative integer, got ${String(bytes)}`))
    return this.queue.push(async () => {
      const plan = this.makePlan(this.target, bytes)
      this.resetTrials()
      await this.applyPlan(plan)
      this.current = plan
      this.preload = bytes
      if (this.opts.adaptive !== false) this.prepareNeighbours()
      return plan
    })
  }

  /** Tokenizes and classifies each text (one inference per text, queued). */
  async classify(texts: string | readonly string[]): Promise<Classification[]> {
    const list = typeof texts === 'string' ? [texts] : texts
    if (!Array.isArray(list) || list.some((t) => typeof t !== 'string')) throw new ArgumentError('classify: expected a string or an array of strings')
    const out: Classification[] = []
    for (const text of list) {
      const enc = this.encoder.encode(text)
      const ids = enc.ids.length > this.seq ? [...enc.ids.slice(0, this.seq - 1), enc.ids[enc.ids.length - 1]!] : enc.ids
      const { logits, times } = await this.inferIds(ids)
      const max = Math.max(...logits)
      const exps = Array.from(logits, (v) => Math.exp(v - max))
      const sum = exps.reduce((a, b) => a + b, 0)
      const scores = exps.map((e) => e / sum)
      let index = 0
      for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[index]!) index = i
      out.push({
        label: this.pkg.config.labels[index]!,
        index,
        score: scores[index]!,
        scores,
        logits: Array.from(logits),
        tokens: ids.length,
        truncated: enc.fullLength > ids.length,
        ms: times.totalMs,
      })
    }
    return out
  }

  /** Runs the plan on token ids (special tokens included, at most `seq`). */
  inferIds(ids: readonly number[]): Promise<{ logits: Float32Array; times: RunTimes }> {
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > this.seq) {
      return Promise.reject(new ArgumentError(`inferIds: expected 1..${this.seq} token ids, got ${Array.isArray(ids) ? ids.length : typeof ids}`))
    }
    return this.queue.push(async () => {
      const r = await this.live('infer').run(ids, this.readOptions(), this.current.schedule)
      if (this.opts.adaptive !== false) this.observe(r.times.totalMs)
      return r
    })
  }

  /** The factor the plan aims with (T * 1.05 / factor), and the recent measured / modelled ratios. */
  private factor: number | undefined
  private readonly ratios: number[] = []
  private sinceReplan = 0
  private atRisk = false
  /** A grown plan on trial: the plan and factor it replaced, inferences run and missed so far. */
  private trial: { previous: ElasticPlan; previousFactor: number | undefined; calls: number; misses: number } | undefined
  /** Online grows stay below this modelled time (a grown plan at it failed its trial) for ceilingLeft inferences. */
  private ceilingMs = Infinity
  private ceilingLeft = 0
  private ceilingBackoff = onlineCalibration.ceilingCalls

  /**
   * Online calibration (online-calibration.ts): after each inference, its measured / modelled ratio
   * joins the window; when the factor it gives (recent median x spread) leaves the hysteresis band,
   * the engine re-plans. The new plan is applied by a task queued behind this inference, so the
   * caller's promise does not wait for it (the next queued call does). Ratios stay in the window
   * across re-plans: each was taken against the plan it ran. A grown plan runs on trial (trialCalls):
   * if it misses 1.05 T trialMisses times the engine returns to the plan it left, drops the trial's
   * ratios, and grows no further than below the failed plan for a while (ceilingCalls, doubling).
   */
  private observe(totalMs: number): void {
    const c = onlineCalibration
    if (this.ceilingLeft > 0 && --this.ceilingLeft === 0) this.ceilingMs = Infinity
    this.ratios.push(totalMs / this.current.modelledMs)
    if (this.ratios.length > c.spreadWindow) this.ratios.shift()
    this.sinceReplan++
    const trial = this.trial
    if (trial !== undefined) {
      trial.calls++
      if (totalMs > 1.05 * this.target) trial.misses++
      if (trial.misses >= c.trialMisses) {
        this.trial = undefined
        this.ceilingMs = Math.min(this.ceilingMs, this.current.modelledMs)
        this.ceilingLeft = this.ceilingBackoff
        this.ceilingBackoff = Math.min(2 * this.ceilingBackoff, c.ceilingMaxCalls)
        this.ratios.splice(Math.max(0, this.ratios.length - trial.calls))
        this.factor = trial.previousFactor
        this.sinceReplan = 0
        this.switchTo(trial.previous)
        return
      }
      if (trial.calls >= c.trialCalls) this.trial = undefined
    }
    const now = this.factor ?? Math.max(1, this.jitter)
    const next = replanFactor(this.ratios, now, this.sinceReplan)
    if (next === undefined) return
    const previousFactor = this.factor
    this.factor = next
    this.sinceReplan = 0
    let plan: ElasticPlan
    try {
      plan = this.makePlan(this.target, this.preload, next < now ? this.ceilingMs : Infinity)
      this.atRisk = false
    } catch {
      // Growing: nothing fits under the ceiling, the plan in force stays. Shrinking: T cannot be met at
      // the measured ratio; keep the plan in force and say so in stats().
      if (next >= now) this.atRisk = true
      return
    }
    if (sameShards(plan, this.current)) {
      this.current = plan
      return
    }
    if (plan.modelledMs > this.current.modelledMs) this.trial = { previous: this.current, previousFactor, calls: 0, misses: 0 }
    else this.trial = undefined
    this.switchTo(plan)
  }

  /**
   * Applies a plan in a task queued now, so it runs before any inference the caller starts after this
   * one returns. No warm-up run: the arena keeps its pages across a re-plan (native/alloc/arena.cc) and
   * a plan run before keeps its layout, so the next inference pays only for pages the new plan adds,
   * while a warm-up would cost it a whole inference.
   */
  private switchTo(plan: ElasticPlan): void {
    void this.queue
      .push(async () => {
        await this.live('re-plan').apply(this.runPlan(plan))
        this.current = plan
      })
      .catch(() => undefined) // the plan in force stays; the next inference reports a broken session
  }

  /**
   * Builds the layouts of the plans online calibration is likeliest to move to: those made with the
   * factor in force x 1.1^k, k = -3..3 (at least 1). A re-plan to a plan whose program is not built
   * costs the next inference the build (about 3 ms here), which at T = 10 ms can be a miss by itself.
   * Each new layout costs 0.5-1 MB of RSS here (its program, and the V8 heap its build's garbage
   * touches), hence only these few. Factors that give the same plan find it in the executor's cache.
   */
  private prepareNeighbours(): void {
    const now = this.factor ?? Math.max(1, this.jitter)
    for (let k = -3; k <= 3; k++) {
      let plan: ElasticPlan
      try {
        plan = this.makePlan(this.target, this.preload, Infinity, Math.max(1, now * 1.1 ** k))
      } catch {
        continue // infeasible at this factor
      }
      this.live('prepare').prepare(this.runPlan(plan))
    }
  }

  /** Forgets trials and ceilings (the caller set a new target or preload size). */
  private resetTrials(): void {
    this.trial = undefined
    this.ceilingMs = Infinity
    this.ceilingLeft = 0
    this.ceilingBackoff = onlineCalibration.ceilingCalls
  }

  /** Reads as the caller configured them (cold with O_DIRECT, throttled). */
  private readOptions(): NativeReadOptions {
    return { direct: this.opts.direct, ...(this.opts.bandwidth ? { bandwidth: this.opts.bandwidth } : {}) }
  }

  /**
   * Open-time calibration (openFactor in online-calibration.ts): `runs` inferences of the plan just
   * applied, on seq distinct tokens spread over the vocabulary (the on-demand embedding read touches
   * the most pages), with the configured IO. When their median measured / modelled ratio puts the plan
   * outside the online band, re-plan with it and measure again. The ratios join the online window.
   */
  private async calibrateAtOpen(runs: number): Promise<void> {
    if (runs === 0) return
    const vocab = this.pkg.config.vocab
    const ids = Array.from({ length: this.seq }, (_, i) => Math.floor((i * (vocab - 1)) / Math.max(1, this.seq - 1)))
    for (let round = 0; round < 3; round++) {
      const ratios: number[] = []
      for (let i = 0; i < runs; i++) {
        const r = await this.live('open').run(ids, this.readOptions(), this.current.schedule)
        ratios.push(r.times.totalMs / this.current.modelledMs)
      }
      this.ratios.push(...ratios)
      this.ratios.splice(0, Math.max(0, this.ratios.length - onlineCalibration.spreadWindow))
      const next = openFactor(ratios, this.factor ?? Math.max(1, this.jitter), this.jitter)
      if (next === undefined) return
      this.factor = next
      let plan: ElasticPlan
      try {
        plan = this.makePlan(this.target, this.preload)
        this.atRisk = false
      } catch {
        this.atRisk = true // T cannot be met at the measured ratio: keep the plan, say so in stats()
        return
      }
      if (sameShards(plan, this.current)) {
        this.current = plan
        return
      }
      await this.applyPlan(plan)
      this.current = plan
    }
  }

  /** Resolves once every queued inference and re-plan has finished. */
  settled(): Promise<void> {
    return this.queue.idle()
  }

  stats(): ElasticStats {
    const s = this.live('stats').stats
    return {
      plan: this.current,
      latencyFactor: this.factor ?? Math.max(1, this.jitter),
      targetAtRisk: this.atRisk,
      residentParameterBytes: this.live('stats').residentParameterBytes,
      preloadBytes: s.preloadBytes,
      stagingBytes: s.stagingBytes,
      arenaBytes: s.arenaBytes,
      bytesRead: s.bytesRead,
      threads: s.threads,
      reader: s.reader,
      importance: this.importanceKind,
    }
  }

  async close(): Promise<void> {
    await this.queue.push(async () => undefined).catch(() => undefined)
    this.x?.dispose()
    this.x = undefined
  }

  /**
   * Plans for T. The device profile's calibration says how much real inferences jitter: the planners
   * aim at T * min(1, 1.05 / jitter), so that 95% finish within 1.05 T. With on-demand embeddings both
   * lanes start after the embedding read (e ms): the planners get that aim minus e, and the plan's
   * modelled time gets e back.
   */
  /**
   * Applies a plan and runs it once on a two-token input (buffered reads), so the first inference the
   * caller times does not pay for first-touch page faults in the new arena and JIT warm-up.
   */
  private async applyPlan(plan: ElasticPlan): Promise<void> {
    const x = this.live('plan')
    await x.apply(this.runPlan(plan))
    await x.run([0, 0], { direct: false }, plan.schedule)
  }

  /** The executor's plan: the planner's shard versions and the smallest staging ring that keeps its timing. */
  private runPlan(plan: ElasticPlan): RunPlan {
    return { ...toRunPlan(plan, this.seq), window: stagingWindow(this.profile, plan) }
  }

  /** `belowMs`: the plan's modelled time must stay under it (a ceiling from a failed trial). */
  private makePlan(targetMs: number, preloadBytes: number, belowMs = Infinity, factor = this.factor ?? this.jitter): ElasticPlan {
    const p = this.opts.planner ?? 'flexpipe'
    const bits = this.opts.plannerBits ?? 32
    const e = this.embeddingIoMs
    // The aim never passes 1.05 T in modelled time, even when inferences run faster than modelled:
    // the model's errors are partly fixed costs (the worst-case embedding read), so a small plan's
    // low ratio does not carry over to a larger plan (allowing it grew plans that then missed T).
    const aim = Math.min(1, 1.05 / factor)
    // A target the embedding read alone exceeds still goes to the planner (as the least positive
    // target), so its error names the minimum of the same planner, preload bits and accuracy table.
    const t = Math.max(Math.min(targetMs * aim, belowMs * (1 - 1e-9)) - e, Number.MIN_VALUE)
    let plan: ElasticPlan
    try {
      if (p === 'flexpipe') plan = planElastic(this.profile, this.importance, { targetMs: t, preloadBytes, ...(this.opts.preloadBits ? { preloadBits: this.opts.preloadBits } : {}) })
      else if (p === 'load-and-exec') plan = planLoadAndExec(this.profile, { targetMs: t })
      else if (p === 'stdpl') plan = planStdPL(this.profile, { targetMs: t, bits })
      else plan = planPreloadModel(this.profile, { targetMs: t, bits })
    } catch (err) {
      if (err instanceof LatencyTargetError) {
        const minimum = Math.ceil(((err.minimumMs + e) / aim) * 1000) / 1000
        throw new LatencyTargetError('an elastic sub-model', targetMs, minimum, err.minimumPreloadBytes)
      }
      throw err
    }
    return { ...plan, targetMs, modelledMs: plan.modelledMs + e }
  }

  private live(what: string): ElasticExecutor {
    if (this.x === undefined) throw new DisposedError(what)
    return this.x
  }
}

/** Same sub-model, shard versions and preload set (the executor would run the same thing). */
function sameShards(a: ElasticPlan, b: ElasticPlan): boolean {
  if (a.depth !== b.depth || a.width !== b.width) return false
  return a.shards.every((row, k) => row.every((s, j) => s.bits === b.shards[k]![j]!.bits && s.preloaded === b.shards[k]![j]!.preloaded))
}

/**
 * The accuracies of a package's importance profile (dev-set.ts profileImportance: `accuracy[l][h]` with
 * that shard alone at the highest bitwidth, `lowAccuracy`, `fullAccuracy`, and `subModelAccuracy` when
 * measured at the package's `bitwidths`), or undefined when it has none or not of this shape (the
 * planner then assumes more bits are never worse, as the seed does). A table of another shape or other
 * bitwidths is left out.
 */
export function measuredAccuracy(importance: unknown, layers: number, heads: number, bitwidths: readonly number[]): MeasuredAccuracy | undefined {
  const i = importance as { accuracy?: unknown; lowAccuracy?: unknown; fullAccuracy?: unknown; subModelAccuracy?: unknown; bitwidths?: unknown } | undefined
  const table = i?.accuracy
  const lowest = i?.lowAccuracy
  const highest = i?.fullAccuracy
  if (typeof lowest !== 'number' || typeof highest !== 'number' || !Number.isFinite(lowest) || !Number.isFinite(highest)) return undefined
  if (!isFiniteGrid(table, [layers, heads])) return undefined
  const gain = (table as number[][]).map((r) => r.map((a) => a - lowest))
  // The sub-model table, when it was measured at the package's bitwidths and has their shape.
  const t = i?.subModelAccuracy
  const b = i?.bitwidths
  const sameBits = Array.isArray(b) && b.length === bitwidths.length && b.every((x, k) => x === bitwidths[k])
  const subModels = sameBits && isFiniteGrid(t, [layers, heads, bitwidths.length]) ? { subModels: t as number[][][] } : {}
  return { lowest, highest, gain, ...subModels }
}

function layerOrder(c: EncoderConfig): ShardRef[] {
  const out: ShardRef[] = []
  for (let l = 0; l < c.layers; l++) for (let h = 0; h < c.heads; h++) out.push({ layer: l, shard: h })
  return out
}

/** The executor's view of a planner's plan. */
export function toRunPlan(plan: ElasticPlan, seq: number): RunPlan {
  return {
    depth: plan.depth,
    width: plan.width,
    seq,
    bits: plan.shards.map((row) => row.map((s) => s.bits)),
    preloaded: plan.shards.map((row) => row.map((s) => s.preloaded)),
  }
}
