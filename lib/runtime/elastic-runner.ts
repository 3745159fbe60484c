// SPDX-License-Identifier: Apache-2.0
// ElasticRunner: runs elastic sub-models of a package on an executor. It applies a RunPlan's
// ExecutionPlan (lib/plan/elastic/elastic-layout.ts; layouts cached, since re-plans revisit plans) and
// runs token ids through it: the pages of the tokens' embedding rows are the run's input loads, read
// first; then each layer's job of staged shard versions is read while earlier layers compute, all on
// the native gate (one pipelined run, no JavaScript between layers). It reports when each job was in
// and when each layer computed. The elastic engine runs its plans with it; profiling tools use it
// directly (ElasticRunner.open), with any sub-model.
import { ArgumentError } from '../errors.js'
import { readExternal } from '../model/constant-data.js'
import type { EncoderConfig } from '../model/encoder-config.js'
import type { ExternalTensor, TensorData } from '../model/ir.js'
import type { Prepack } from '../model/ops/op-def.js'
import { binding, type NativeReadOptions, type NativePipelineResult } from '../native/binding.js'
import { shardBlobName } from '../package/elastic-manifest.js'
import type { BlobEntry } from '../package/index.js'
import { applyDelta, elasticArena, emptyArenaContent, type ArenaContent, elasticLayout, embeddingRows, type ElasticArena, type ElasticLayout, type PackedConstants, type RunPlan } from '../plan/elastic/elastic-layout.js'
import type { ExecutionPlan, ProgramIo, ResidentWrite } from '../plan/execution-plan.js'
import type { TracedRun } from './engine-base.js'
import { Executor, type AppliedPlan } from './executor.js'
import { runPrepack } from './prepack.js'

export type { RunPlan } from '../plan/elastic/elastic-layout.js'

export interface RunTimes {
  readonly totalMs: number
  /** Per layer: when its IO job was in (ms from the run's start; 0 without IO) and when its compute started and ended. */
  readonly ioEndMs: readonly number[]
  readonly computeStartMs: readonly number[]
  readonly computeEndMs: readonly number[]
  readonly bytesRead: number
  /** When the on-demand embedding rows were in (0 with resident embeddings). */
  readonly embeddingIoMs: number
}

export interface RunnerOptions {
  readonly threads: number
  readonly io: 'auto' | 'uring' | 'pread'
  /**
   * 'on-demand' (default where possible): the word-embedding table stays on disk and each inference
   * reads the 4 KiB pages holding its tokens' rows first, into a staging table the embedding Gather
   * reads through remapped ids. Possible when a row's bytes divide 4096 or are a multiple of it (rows
   * then never straddle a page); otherwise, and with 'resident', the table is read with the other
   * resident parameters.
   */
  readonly embeddings?: 'on-demand' | 'resident'
}

/** Layouts kept: a re-plan to one of them skips the program build (about 3 ms here). */
const layoutCacheSize = 16

/** The cache key of a run plan: everything the layout reads from it. */
function layoutKey(plan: RunPlan): string {
  const bits = plan.bits.slice(0, plan.depth).map((row, l) => row.slice(0, plan.width).map((b, j) => (plan.preloaded[l]![j] ? `p${b}` : `${b}`)).join(','))
  return `${plan.depth}x${plan.width}/${plan.seq}/${plan.window ?? plan.depth}/${plan.schedule ?? 'pipelined'}/${bits.join(';')}`
}

export class ElasticRunner {
  private readonly arena: ElasticArena
  private readonly constants: PackedConstants
  private readonly packed = new Map<string, TensorData>()
  private readonly layouts = new Map<string, ElasticLayout>()
  private active: { readonly layout: ElasticLayout; readonly applied: AppliedPlan } | undefined
  /** The preloaded versions and plan constants in the arena now (emptied while an apply is under way). */
  private content: ArenaContent = emptyArenaContent
  /** Whether the resident parameters are in the arena (read with the first plan applied). */
  private residentRead = false

  /** A runner on `x`'s session (the caller owns it); `ElasticRunner.open` makes one with its own. */
  constructor(
    readonly path: string,
    readonly config: EncoderConfig,
    private readonly blobs: ReadonlyMap<string, BlobEntry>,
    private readonly x: Executor,
    options: Pick<RunnerOptions, 'embeddings'> = {},
  ) {
    this.arena = elasticArena(path, config, blobs, options.embeddings)
    this.constants = { offsets: new Map(), end: this.arena.residentBytes + 64, pack: (key, t, p, node) => this.packedConstant(key, t, p, node) }
  }

  /** A runner with its own session (profiling tools); dispose() frees it. */
  static open(path: string, config: EncoderConfig, blobs: ReadonlyMap<string, BlobEntry>, options: RunnerOptions): Promise<ElasticRunner> {
    const x = new Executor(new (binding().Session)(options.threads, options.io))
    return Promise.resolve(new ElasticRunner(path, config, blobs, x, options))
  }

  get onDemand(): boolean {
    return this.arena.onDemand
  }

  /** Bytes of resident parameters (what every plan keeps). */
  get residentParameterBytes(): number {
    let n = 0
    for (const name of this.arena.resident.keys()) n += this.blobs.get(name)!.length
    return n
  }

  get stats(): { residentBytes: number; preloadBytes: number; stagingBytes: number; arenaBytes: number; bytesRead: number; threads: number; reader: string } {
    const s = this.x.session.stats()
    const l = this.active?.layout
    return { residentBytes: this.arena.residentBytes, preloadBytes: l?.preloadBytes ?? 0, stagingBytes: l?.stagingBytes ?? 0, arenaBytes: s.arenaBytes, bytesRead: s.bytesRead, threads: s.threads, reader: s.reader }
  }

  /** The package's blob entries. */
  get blobEntries(): ReadonlyMap<string, BlobEntry> {
    return this.blobs
  }

  /** The shard bitwidths the package stores, ascending. */
  get bitwidths(): number[] {
    const set = new Set<number>()
    for (const name of this.blobs.keys()) {
      const m = /^L0\.S0\.b(\d+)$/.exec(name)
      if (m !== null) set.add(Number(m[1]))
    }
    return [...set].sort((a, b) => a - b)
  }

  /** The blob of a shard version. */
  blob(layer: number, shard: number, bits: number): BlobEntry {
    const b = this.blobs.get(shardBlobName(layer, shard, bits))
    if (b === undefined) throw new ArgumentError(`the package has no ${bits}-bit version of layer ${layer} shard ${shard}`)
    return b
  }

  /** The applied plan's program: its inputs, outputs and ops. */
  get program(): ProgramIo | undefined {
    return this.active?.applied.plan
  }

  /** The applied ExecutionPlan: program, memory layout and load queue. */
  get execution(): ExecutionPlan | undefined {
    return this.active?.applied.plan
  }

  get plan(): RunPlan | undefined {
    return this.active?.layout.runPlan
  }

  /** Op ranges of the applied program, for profiling. */
  get ranges(): { layerBegin: readonly number[]; layerEnd: readonly number[]; ops: number } | undefined {
    const l = this.active?.layout
    return l === undefined ? undefined : { layerBegin: l.layerBegin, layerEnd: l.layerEnd, ops: l.exec.opNodes.length }
  }

  /** Reads IO job `layer` of the applied plan alone (device profiling: a read, not a run). */
  async timeJob(layer: number, read: NativeReadOptions): Promise<{ ms: number; bytes: number }> {
    const l = this.active?.layout
    if (l === undefined) throw new ArgumentError('no plan is applied')
    const r = await this.x.session.readFile(this.path, l.jobs[layer]!, read)
    return { ms: r.ms, bytes: r.bytes }
  }

  /** Applies a plan: its layout (cached), the preload buffer filled, its program added. */
  async apply(plan: RunPlan): Promise<void> {
    const layout = this.cachedLayout(plan)
    const old = this.active
    if (old !== undefined) this.x.remove(old.applied)
    this.active = undefined
    const delta = applyDelta(layout, this.arena.residentBytes, this.content)
    let exec = delta.exec
    if (!this.residentRead) exec = { ...exec, keepBytes: 0, resident: [this.residentParameters(), ...exec.resident] }
    // The arena stays at the largest plan's size: shrinking returns pages that the next grown plan
    // faults in again during its first inference (0.5-2.7 ms per MB here), and the controller's grows
    // are on trial, so that first inference decided whether the grow stayed. Peak memory is the same.
    exec = { ...exec, arenaBytes: Math.max(exec.arenaBytes, this.x.session.stats().arenaBytes) }
    this.content = emptyArenaContent // a failed apply leaves the arena's content unknown
    const applied = await this.x.apply(exec)
    this.residentRead = true
    this.content = delta.content
    this.active = { layout, applied }
  }

  /** Applies a plan unless it is the one applied (the same layout). */
  async use(plan: RunPlan): Promise<void> {
    if (this.active !== undefined && layoutKey(this.active.layout.runPlan) === layoutKey(plan)) return
    await this.apply(plan)
  }

  /**
   * Builds and caches a plan's layout without applying it, so that a later re-plan to it costs no
   * program build (the engine prepares the plans its calibration may move to at open).
   */
  prepare(plan: RunPlan): void {
    this.cachedLayout(plan)
  }

  /**
   * Runs the applied plan on token ids (at most seq of them; the rest is padding, masked out). Returns
   * the logits, the run's timeline per layer, and the plan and report of the run.
   */
  async run(ids: readonly number[], read: NativeReadOptions = {}, profile?: Float64Array): Promise<{ logits: Float32Array; times: RunTimes; run: TracedRun }> {
    const a = this.active
    if (a === undefined) throw new ArgumentError('no plan is applied')
    const { layout, applied } = a
    const S = layout.runPlan.seq
    const idsT = new BigInt64Array(S)
    const mask = new Float32Array(S).fill(-10000)
    const n = Math.min(ids.length, S)
    for (let i = 0; i < n; i++) {
      const id = ids[i]!
      if (!(Number.isInteger(id) && id >= 0 && id < this.config.vocab)) throw new ArgumentError(`token id ${id} at position ${i} is outside the vocabulary 0..${this.config.vocab - 1}`)
      idsT[i] = BigInt(id)
      mask[i] = 0
    }
    const inputLoads = this.arena.onDemand ? embeddingRows(this.arena, layout, idsT) : undefined
    const logits = new Float32Array(this.config.labels.length)
    const inputs: Array<[number, ArrayBufferView]> = applied.plan.inputs.map((i) => [i.tensor, i.name === 'ids' ? idsT : mask])
    const out = applied.plan.outputs[0]!
    if (out.source.kind !== 'tensor') throw new ArgumentError('the sub-model program has no logits tensor')
    const t0 = performance.now()
    const r = await this.x.run(applied, inputs, [[out.source.tensor, logits]], { profile: true, read, ...(inputLoads === undefined ? {} : { inputLoads }) })
    const totalMs = performance.now() - t0
    if (profile !== undefined && r.opMs !== undefined) profile.set(r.opMs)
    return { logits, times: timeline(layout, totalMs, (inputLoads?.length ?? 0) / 3, r.opMs, r.pipeline), run: { plan: applied.plan, report: r } }
  }

  /** Frees the session: for runners made by ElasticRunner.open (an engine frees its own). */
  dispose(): void {
    this.active = undefined
    this.x.session.dispose()
  }

  /** The layout of a plan from the cache (moved to most recently used), built on a miss. */
  private cachedLayout(plan: RunPlan): ElasticLayout {
    const key = layoutKey(plan)
    let layout = this.layouts.get(key)
    if (layout === undefined) {
      layout = elasticLayout(this.arena, plan, this.constants)
      if (this.layouts.size >= layoutCacheSize) this.layouts.delete(this.layouts.keys().next().value!)
    } else this.layouts.delete(key)
    this.layouts.set(key, layout)
    return layout
  }

  /** The read of every resident parameter to its place. */
  private residentParameters(): ResidentWrite {
    const ranges: number[] = []
    for (const [name, r] of this.arena.resident) {
      const b = this.blobs.get(name)!
      ranges.push(b.offset, b.length, r.offset)
    }
    return { kind: 'file', path: this.path, ranges: new Float64Array(ranges), mode: 'buffered' }
  }

  /** A constant operand in a kernel's packed form (read from the package, transformed once, cached). */
  private packedConstant(key: string, t: ExternalTensor, prepack: Prepack, node: string): TensorData {
    const hit = this.packed.get(key)
    if (hit !== undefined) return hit
    let fileOffset: number | undefined
    for (const [name, r] of this.arena.resident) {
      const b = this.blobs.get(name)!
      if (t.offset >= r.offset && t.offset + t.length <= r.offset + b.length) fileOffset = b.offset + (t.offset - r.offset)
    }
    if (fileOffset === undefined) throw new ArgumentError(`constant '${node}' to pack is not a resident tensor`)
    const host = readExternal({ dtype: t.dtype, dims: t.dims, path: this.path, offset: fileOffset, length: t.length })
    const packed = runPrepack(host, prepack, node)
    this.packed.set(key, packed)
    return packed
  }
}

/**
 * A run's timeline per layer from the native one: a job is in when its last range is, a layer computes
 * from its first op's start to its last op's end. Without loads (nothing streamed, embeddings resident)
 * the run was a plain one, timed per op only: the ops then count as run back to back.
 */
function timeline(l: ElasticLayout, totalMs: number, inputLoads: number, opMs: Float64Array | undefined, p: NativePipelineResult | undefined): RunTimes {
  const { start, end } = opClock(opMs, p)
  const latest = (from: number, to: number): number => {
    let t = 0
    for (let j = from; j < to; j++) t = Math.max(t, p?.loadEndMs[j] ?? 0)
    return t
  }
  const layers = Array.from({ length: l.runPlan.depth }, (_, k) => k)
  return {
    totalMs,
    ioEndMs: layers.map((k) => latest(inputLoads + l.jobStart[k]!, inputLoads + l.jobStart[k + 1]!)),
    computeStartMs: layers.map((k) => start[l.layerBegin[k]!] ?? 0),
    computeEndMs: layers.map((k) => end[l.layerEnd[k]! - 1] ?? 0),
    bytesRead: p?.bytes ?? 0,
    embeddingIoMs: latest(0, inputLoads),
  }
}

/** When each op started and ended: the gate's clock, or op times laid end to end. */
function opClock(opMs: Float64Array | undefined, p: NativePipelineResult | undefined): { start: ArrayLike<number>; end: ArrayLike<number> } {
  if (p?.opStartMs !== undefined && p.opEndMs !== undefined) return { start: p.opStartMs, end: p.opEndMs }
  const n = opMs?.length ?? 0
  const start = new Float64Array(n)
  const end = new Float64Array(n)
  for (let k = 0, t = 0; k < n; k++) {
    start[k] = t
    t += opMs![k]!
    end[k] = t
  }
  return { start, end }
}
