// SPDX-License-Identifier: Apache-2.0
// ElasticExecutor: runs elastic sub-models from a package as STI's layer-wise pipeline (seed §5.5).
//
// One native session, one arena:
//   [resident | preload | plan constants | embedding rows | staging | activations]
//   resident     float32 parameters that never leave memory (LayerNorms, biases, position
//                embeddings, pooler, classifier), read once at open; the word-embedding table too
//                when it cannot be read by rows (ExecutorOptions.embeddings)
//   embedding    the 4 KiB pages of this inference's token rows, read first by the load lane
//   preload      the preload buffer: shard versions the plan keeps across calls (4 KiB-aligned)
//   staging      one slot per shard version the plan loads per inference (4 KiB-aligned, O_DIRECT)
//   activations  the sub-model program's activations, including the working buffer: a layer's
//                dequantized float32 weights (outputs of DequantizeLayer, planned like any activation,
//                so one layer's worth is live at a time)
// Per inference: the load lane runs one IO job per layer (one readFile of that layer's staged shard
// versions, io_uring, O_DIRECT when asked), in layer order; the compute lane runs the embeddings, then
// layer k (dequantization with OpenMP, then the partial layer) once IO job k is done and layer k-1 has
// run, then the pooler and classifier. Nothing is allocated per inference on the native side.
import { ArgumentError, DisposedError } from '../errors.js'
import type { DType } from '../model/dtype.js'
import { inferGraph } from '../model/infer-graph.js'
import type { ExternalTensor, Graph, TensorData } from '../model/ir.js'
import type { Prepack } from '../model/ops/op-def.js'
import { prepackKey, readExternal, runPrepack } from './constants.js'
import { binding, type NativeReadOptions, type NativeSession } from '../native/binding.js'
import { alignUp, type BlobEntry } from '../package/index.js'
import { buildProgram, type ExecutionPlan } from '../plan/program-builder.js'
import { fromNative } from './native-errors.js'
import type { EncoderConfig } from '../model/encoder-config.js'
import { shardBlobName } from '../prepare/prepare-elastic.js'
import { elasticOps } from '../model/ops/elastic-ops.js'
import { blobName, buildSubmodelGraph } from '../plan/elastic/submodel-graph.js'

/** What to run: the sub-model, its shard versions and which are preloaded. */
export interface RunPlan {
  readonly depth: number
  readonly width: number
  readonly seq: number
  /** Per layer k < depth, per shard j < width. */
  readonly bits: ReadonlyArray<readonly number[]>
  readonly preloaded: ReadonlyArray<readonly boolean[]>
  /**
   * Staging slots (layers of staged shards held at once; default depth = all). With W < depth, IO job
   * k waits until layer k - W has computed and reuses its slot (lib/plan/elastic/staging-window.ts
   * picks the smallest W that does not delay the planned pipeline).
   */
  readonly window?: number
}

export interface RunTimes {
  readonly totalMs: number
  /** Per layer: when its IO job ended (ms from the start; 0 without IO) and when its compute started and ended. */
  readonly ioEndMs: readonly number[]
  readonly computeStartMs: readonly number[]
  readonly computeEndMs: readonly number[]
  readonly bytesRead: number
  /** When the on-demand embedding rows were in (0 with resident embeddings). */
  readonly embeddingIoMs: number
}

export interface ExecutorOptions {
  readonly threads: number
  readonly io: 'auto' | 'uring' | 'pread'
  /**
   * 'on-demand' (default where possible): the word-embedding table stays on disk and each inference
   * reads the 4 KiB pages holding its tokens' rows first, in the load lane, into a staging table the
   * embedding Gather reads through remapped ids. Possible when a row's bytes divide 4096 or are a
   * multiple of it (rows then never straddle a page); otherwise, and with 'resident', the table is
   * read at open like the other resident parameters.
   */
  readonly embeddings?: 'on-demand' | 'resident'
}

/** A plan's arena layout and program, as built by `layout` (cached per plan: re-plans revisit plans). */
interface Layout {
  readonly plan: RunPlan
  readonly exec: ExecutionPlan
  readonly activationBase: number
  /** Per layer: [fileOffset, length, arenaOffset] triples of its IO job (empty: all preloaded). */
  readonly jobs: readonly Float64Array[]
  readonly jobBytes: readonly number[]
  readonly window: number
  /** Op ranges: embeddings [0, layerBegin[0]), layer k [layerBegin[k], layerEnd[k]), head after. */
  readonly layerBegin: readonly number[]
  readonly layerEnd: readonly number[]
  /** Arena offset of the on-demand embedding staging table. */
  readonly embeddingOffset: number
  readonly ops: number
  readonly preloadBytes: number
  readonly stagingBytes: number
  readonly arenaBytes: number
  /** Arena offset of the plan constants ([CLS] index, then the packed operands at packedAt). */
  readonly constOffset: number
  readonly packedAt: ReadonlyMap<string, number>
  /** Preloaded shard versions: [blob name, entry, arena offset]. */
  readonly preloadWanted: ReadonlyArray<readonly [string, BlobEntry, number]>
}

interface Applied extends Layout {
  readonly program: number
}

/** Layouts kept: a re-plan to one of them skips the program build (about 3 ms here). */
const layoutCacheSize = 16

/** The cache key of a run plan: everything `layout` reads from it. */
function layoutKey(plan: RunPlan): string {
  const bits = plan.bits.slice(0, plan.depth).map((row, l) => row.slice(0, plan.width).map((b, j) => (plan.preloaded[l]![j] ? `p${b}` : `${b}`)).join(','))
  return `${plan.depth}x${plan.width}/${plan.seq}/${plan.window ?? plan.depth}/${bits.join(';')}`
}

const page = 4096

export class ElasticExecutor {
  private session: NativeSession | undefined
  private readonly resident = new Map<string, { offset: number; dims: readonly number[] }>()
  private readonly residentBytes: number
  private active: Applied | undefined
  /** Preloaded blob name -> arena offset, as currently in memory. */
  private preloadContent = new Map<string, number>()
  private readonly packed = new Map<string, TensorData>()
  private readonly layouts = new Map<string, Layout>()
  /** The plan-constants region shared by all plans: packed operand key -> arena offset, and its end. */
  private readonly constants = new Map<string, number>()
  private constEnd: number
  readonly onDemand: boolean
  private readonly rowsPerPage: number
  private readonly pagesPerRow: number

  private constructor(
    readonly path: string,
    readonly config: EncoderConfig,
    private readonly blobs: ReadonlyMap<string, BlobEntry>,
    options: ExecutorOptions,
  ) {
    const rowBytes = config.hidden * 4
    this.onDemand = options.embeddings !== 'resident' && (page % rowBytes === 0 || rowBytes % page === 0)
    this.rowsPerPage = Math.max(1, page / rowBytes)
    this.pagesPerRow = Math.max(1, rowBytes / page)
    let at = 0
    for (const b of blobs.values()) {
      if (b.kind !== 'resident' || (this.onDemand && b.name === 'emb.word')) continue
      this.resident.set(b.name, { offset: at, dims: b.dims ?? [b.length / 4] })
      at += alignUp(b.length, 64)
    }
    this.residentBytes = alignUp(at, page)
    this.constEnd = this.residentBytes + 64
    this.session = new (binding().Session)(options.threads, options.io)
  }

  /** Opens the executor on a package's blobs and reads the resident parameters. */
  static async open(path: string, config: EncoderConfig, blobs: ReadonlyMap<string, BlobEntry>, options: ExecutorOptions): Promise<ElasticExecutor> {
    const x = new ElasticExecutor(path, config, blobs, options)
    try {
      const s = x.live('open')
      s.resize(x.residentBytes, 0)
      const ranges: number[] = []
      for (const [name, r] of x.resident) {
        const b = blobs.get(name)!
        ranges.push(b.offset, b.length, r.offset)
      }
      await s.readFile(path, new Float64Array(ranges), { direct: false })
    } catch (err) {
      x.dispose()
      throw err
    }
    return x
  }

  /** A constant operand in a kernel's packed form (read from the package, transformed once, cached). */
  private packedConstant(key: string, t: ExternalTensor, prepack: Prepack, node: string): TensorData {
    const hit = this.packed.get(key)
    if (hit !== undefined) return hit
    let fileOffset: number | undefined
    for (const [name, r] of this.resident) {
      const b = this.blobs.get(name)!
      if (t.offset >= r.offset && t.offset + t.length <= r.offset + b.length) fileOffset = b.offset + (t.offset - r.offset)
    }
    if (fileOffset === undefined) throw new ArgumentError(`constant '${node}' to pack is not a resident tensor`)
    const host = readExternal({ dtype: t.dtype, dims: t.dims, path: this.path, offset: fileOffset, length: t.length })
    const packed = runPrepack(host, prepack, node)
    this.packed.set(key, packed)
    return packed
  }

  /** Bytes of resident parameters (what every plan keeps). */
  get residentParameterBytes(): number {
    let n = 0
    for (const name of this.resident.keys()) n += this.blobs.get(name)!.length
    return n
  }

  get stats(): { residentBytes: number; preloadBytes: number; stagingBytes: number; arenaBytes: number; bytesRead: number; threads: number; reader: string } {
    const s = this.live('stats').stats()
    const a = this.active
    return {
      residentBytes: this.residentBytes,
      preloadBytes: a?.preloadBytes ?? 0,
      stagingBytes: a?.stagingBytes ?? 0,
      arenaBytes: s.arenaBytes,
      bytesRead: s.bytesRead,
      threads: s.threads,
      reader: s.reader,
    }
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

  /** Runs IO job `layer` of the applied plan alone (device profiling). */
  async timeJob(layer: number, read: NativeReadOptions): Promise<{ ms: number; bytes: number }> {
    const a = this.active
    if (a === undefined) throw new ArgumentError('no plan is applied')
    const r = await this.live('timeJob').readFile(this.path, a.jobs[layer]!, read)
    return { ms: r.ms, bytes: r.bytes }
  }

  blob(layer: number, shard: number, bits: number): BlobEntry {
    const b = this.blobs.get(shardBlobName(layer, shard, bits))
    if (b === undefined) throw new ArgumentError(`the package has no ${bits}-bit version of layer ${layer} shard ${shard}`)
    return b
  }

  /** Builds the program of a plan, lays out the arena and fills the preload buffer. */
  async apply(plan: RunPlan): Promise<void> {
    const s = this.live('apply')
    await this.install(s, this.cachedLayout(plan))
  }

  /**
   * Builds and caches a plan's layout without applying it, so that a later re-plan to it costs no
   * program build (the engine prepares the plans its calibration may move to at open).
   */
  prepare(plan: RunPlan): void {
    this.live('prepare')
    this.cachedLayout(plan)
  }

  /** The layout of a plan from the cache (moved to most recently used), built on a miss. */
  private cachedLayout(plan: RunPlan): Layout {
    const key = layoutKey(plan)
    let layout = this.layouts.get(key)
    if (layout === undefined) {
      layout = this.layout(plan)
      if (this.layouts.size >= layoutCacheSize) this.layouts.delete(this.layouts.keys().next().value!)
    } else this.layouts.delete(key)
    this.layouts.set(key, layout)
    return layout
  }

  /**
   * The arena layout and program of a plan (pure but for the packed-constant cache and the shared
   * constants region, which only grows: a layout cached before it grew still holds, as its program
   * uses only the constants below its own preload region).
   */
  private layout(plan: RunPlan): Layout {
    const c = this.config
    if (plan.depth < 1 || plan.depth > c.layers || plan.width < 1 || plan.width > c.heads) {
      throw new ArgumentError(`sub-model ${plan.depth}x${plan.width} is outside the ${c.layers}x${c.heads} model`)
    }
    if (plan.seq < 2 || plan.seq > c.maxPositions) throw new ArgumentError(`sequence length ${plan.seq} is outside 2..${c.maxPositions}`)
    // Plan constants first, right after the resident parameters: the [CLS] index, then the constant
    // GEMM operands packed for the kernels. The region is shared by all plans (this.constants: packed
    // key -> offset), so the preload region after it stays put from plan to plan. When a plan packs an
    // operand no plan before it did, the region grows and the layout is made again with everything
    // after it moved up (once per new operand: the plans of one encoder pack the same operands).
    const constOffset = this.residentBytes
    const graphInputs = new Map([
      ['ids', { dtype: 'int64' as const, dims: [plan.seq] }],
      ['mask', { dtype: 'float32' as const, dims: [plan.seq] }],
    ])
    for (;;) {
      const constEnd = this.constEnd
      const packedAt = new Map<string, number>()
      // Preload region, then the embedding staging table, then staging.
      let at = alignUp(constEnd, page)
      const preloadBegin = at
      const where = new Map<string, { offset: number; entry: BlobEntry }>()
      const preloadWanted: Array<[string, BlobEntry, number]> = []
      for (let l = 0; l < plan.depth; l++) {
        for (let j = 0; j < plan.width; j++) {
          if (!plan.preloaded[l]![j]) continue
          const e = this.blob(l, j, plan.bits[l]![j]!)
          where.set(blobName(l, j), { offset: at, entry: e })
          preloadWanted.push([e.name, e, at])
          at += e.paddedLength
        }
      }
      const preloadBytes = at - preloadBegin
      // On-demand embeddings: one staging slot per distinct page (or row, for rows of whole pages).
      const embeddingOffset = at
      const embeddingSlots = this.onDemand ? Math.min(plan.seq, Math.ceil(c.vocab / this.rowsPerPage)) : 0
      at += embeddingSlots * this.pagesPerRow * page
      // Staging: a ring of `window` layer slots; layer l's staged shards go to slot l mod window, sized
      // for the largest layer that uses it.
      const window = Math.min(plan.depth, Math.max(1, plan.window ?? plan.depth))
      const stagingBegin = at
      const jobs: Float64Array[] = []
      const jobBytes: number[] = []
      const slotBytes = new Array<number>(window).fill(0)
      for (let l = 0; l < plan.depth; l++) {
        let bytes = 0
        for (let j = 0; j < plan.width; j++) if (!plan.preloaded[l]![j]) bytes += this.blob(l, j, plan.bits[l]![j]!).paddedLength
        jobBytes.push(bytes)
        slotBytes[l % window] = Math.max(slotBytes[l % window]!, bytes)
      }
      const slotAt: number[] = []
      for (let w = 0; w < window; w++) {
        slotAt.push(at)
        at += slotBytes[w]!
      }
      for (let l = 0; l < plan.depth; l++) {
        const r: number[] = []
        let p = slotAt[l % window]!
        for (let j = 0; j < plan.width; j++) {
          if (plan.preloaded[l]![j]) continue
          const e = this.blob(l, j, plan.bits[l]![j]!)
          where.set(blobName(l, j), { offset: p, entry: e })
          r.push(e.offset, e.paddedLength, p)
          p += e.paddedLength
        }
        jobs.push(new Float64Array(r))
      }
      const stagingBytes = at - stagingBegin
      const activationBase = alignUp(at, page)
      const locate = (name: string, dtype: DType, dims: readonly number[]): ExternalTensor => {
        const b = where.get(name)
        if (b !== undefined) return { dtype: 'uint8', dims: [b.entry.length], path: 'arena', offset: b.offset, length: b.entry.length }
        if (name === 'head.cls') return { dtype, dims, path: 'arena', offset: constOffset, length: 8 }
        if (name === 'emb.word' && this.onDemand) {
          const rows = embeddingSlots * this.rowsPerPage
          return { dtype, dims: [rows, c.hidden], path: 'arena', offset: embeddingOffset, length: rows * c.hidden * 4 }
        }
        const r = this.resident.get(name)
        if (r === undefined) throw new ArgumentError(`the package has no resident tensor '${name}'`)
        const length = dims.reduce((p, d) => p * d, 1) * 4
        return { dtype, dims, path: 'arena', offset: r.offset, length }
      }
      const graph = buildSubmodelGraph(c, plan, locate)
      const inferred = inferGraph(graph, graphInputs, { concrete: true, internalOps: elasticOps })
      const exec = buildProgram(graph, inferred, (name, _v, prepack) => {
        const t = graph.initializers.get(name) as ExternalTensor
        if (prepack === undefined) return { offset: t.offset, dtype: t.dtype, dims: t.dims }
        const key = `${t.offset}:${t.dims.join('x')}${prepackKey(prepack)}`
        const packed = this.packedConstant(key, t, prepack, name)
        let offset = this.constants.get(key)
        if (offset === undefined) {
          offset = this.constEnd
          this.constants.set(key, offset)
          this.constEnd = alignUp(this.constEnd + packed.data.byteLength, 64)
        }
        packedAt.set(key, offset)
        return { offset, dtype: packed.dtype, dims: packed.dims }
      })
      if (this.constEnd !== constEnd) continue // the constants region grew into the preload region
      const layerBegin: number[] = []
      const layerEnd: number[] = []
      exec.opNodes.forEach((n, i) => {
        const m = /^L(\d+)\//.exec(n)
        if (m === null) return
        const l = Number(m[1])
        layerBegin[l] ??= i
        layerEnd[l] = i + 1
      })
      const arenaBytes = activationBase + exec.activationBytes
      return {
        plan,
        exec,
        activationBase,
        jobs,
        jobBytes,
        window,
        layerBegin,
        layerEnd,
        embeddingOffset,
        ops: exec.opNodes.length,
        preloadBytes,
        stagingBytes,
        arenaBytes,
        constOffset,
        packedAt,
        preloadWanted,
      }
    }
  }

  /** Makes a layout the applied plan: arena size, preload buffer, constants, program. */
  private async install(s: NativeSession, l: Layout): Promise<void> {
    const { arenaBytes, preloadWanted, constOffset, packedAt } = l
    // Keep the resident parameters and the preloaded versions already at their planned offsets; read
    // the others (buffered: the preload buffer is filled between inferences).
    const old = this.active
    if (old !== undefined) {
      s.removeProgram(old.program)
      this.active = undefined
    }
    let keepBytes = this.residentBytes
    const ranges: number[] = []
    for (const [name, e, offset] of preloadWanted) {
      if (this.preloadContent.get(name) === offset) keepBytes = Math.max(keepBytes, offset + e.paddedLength)
      else ranges.push(e.offset, e.paddedLength, offset)
    }
    s.resize(arenaBytes, Math.min(keepBytes, arenaBytes))
    this.preloadContent = new Map()
    if (ranges.length > 0) await s.readFile(this.path, new Float64Array(ranges), { direct: false })
    this.preloadContent = new Map(preloadWanted.map(([name, , offset]) => [name, offset]))
    s.write(constOffset, new BigInt64Array([0n]))
    for (const [key, offset] of packedAt) s.write(offset, this.packed.get(key)!.data)
    const program = s.addProgram(l.exec.program)
    this.active = { ...l, program }
  }

  get plan(): RunPlan | undefined {
    return this.active?.plan
  }

  /**
   * Runs the applied plan on token ids (at most seq of them; the rest is padding, masked out).
   * Returns the logits and when each layer's IO and compute happened.
   */
  async run(
    ids: readonly number[],
    read: NativeReadOptions = {},
    schedule: 'pipelined' | 'load-then-execute' = 'pipelined',
    profile?: Float64Array,
  ): Promise<{ logits: Float32Array; times: RunTimes }> {
    const a = this.active
    if (a === undefined) throw new ArgumentError('no plan is applied')
    const s = this.live('run')
    const S = a.plan.seq
    const idsT = new BigInt64Array(S)
    const mask = new Float32Array(S).fill(-10000)
    const n = Math.min(ids.length, S)
    for (let i = 0; i < n; i++) {
      const id = ids[i]!
      if (!(Number.isInteger(id) && id >= 0 && id < this.config.vocab)) throw new ArgumentError(`token id ${id} at position ${i} is outside the vocabulary 0..${this.config.vocab - 1}`)
      idsT[i] = BigInt(id)
      mask[i] = 0
    }
    const embeddingJob = this.onDemand ? this.embeddingJob(idsT, a.embeddingOffset) : undefined
    const logits = new Float32Array(this.config.labels.length)
    const inputs: Array<[number, ArrayBufferView]> = a.exec.inputs.map((i) => [i.tensor, i.name === 'ids' ? idsT : mask])
    const out = a.exec.outputs[0]!
    if (out.source.kind !== 'tensor') throw new ArgumentError('the sub-model program has no logits tensor')
    const outputs: Array<[number, ArrayBufferView]> = [[out.source.tensor, logits]]
    const depth = a.plan.depth
    const ioEnd = new Array<number>(depth).fill(0)
    const cStart = new Array<number>(depth).fill(0)
    const cEnd = new Array<number>(depth).fill(0)
    let bytesRead = 0
    const t0 = performance.now()
    const loads: Array<Promise<void>> = []
    let embeddingIoMs = 0
    let chain: Promise<void> =
      embeddingJob === undefined
        ? Promise.resolve()
        : s.readFile(this.path, embeddingJob, read).then((r) => {
            bytesRead += r.bytes
            embeddingIoMs = performance.now() - t0
          })
    const embeddingLoaded = chain
    // Layer l's compute done: frees staging slot l mod window for IO job l + window.
    const computed: Array<Promise<void>> = []
    const settle: Array<() => void> = []
    for (let l = 0; l < depth; l++) computed.push(new Promise<void>((resolve) => settle.push(resolve)))
    for (let l = 0; l < depth; l++) {
      const job = a.jobs[l]!
      chain = chain.then(async () => {
        if (l >= a.window && job.length > 0) await computed[l - a.window]
        if (job.length > 0) {
          const r = await s.readFile(this.path, job, read)
          bytesRead += r.bytes
        }
        ioEnd[l] = performance.now() - t0
      })
      loads.push(chain)
    }
    const run = (begin: number, end: number): Promise<void> =>
      s.run(a.program, a.activationBase, begin === 0 ? inputs : [], end === a.ops ? outputs : [], profile !== undefined, begin, end).then((ms) => {
        if (profile !== undefined && ms !== undefined) profile.set(ms, begin)
      })
    try {
      const compute = (async () => {
        if (schedule === 'load-then-execute') await chain
        await embeddingLoaded
        await run(0, a.layerBegin[0]!)
        for (let l = 0; l < depth; l++) {
          await loads[l]
          cStart[l] = performance.now() - t0
          await run(a.layerBegin[l]!, a.layerEnd[l]!)
          cEnd[l] = performance.now() - t0
          settle[l]!()
        }
        await run(a.layerEnd[depth - 1]!, a.ops)
      })()
      await Promise.all([compute, chain])
    } catch (err) {
      for (const free of settle) free() // a failed compute must not leave IO waiting for a slot
      await chain.catch(() => undefined)
      throw fromNative(err, a.exec.opNodes)
    }
    return { logits, times: { totalMs: performance.now() - t0, ioEndMs: ioEnd, computeStartMs: cStart, computeEndMs: cEnd, bytesRead, embeddingIoMs } }
  }

  /**
   * The read ranges of the pages holding the rows of `ids` (distinct, in first-use order), and `ids`
   * rewritten in place to rows of the staging table.
   */
  private embeddingJob(ids: BigInt64Array, stagingOffset: number): Float64Array {
    const e = this.blobs.get('emb.word')!
    const slotOf = new Map<number, number>()
    const ranges: number[] = []
    const slotBytes = this.pagesPerRow * page
    for (let i = 0; i < ids.length; i++) {
      const id = Number(ids[i])
      const unit = Math.floor(id / this.rowsPerPage) // page (or row, for rows of whole pages)
      let slot = slotOf.get(unit)
      if (slot === undefined) {
        slot = slotOf.size
        slotOf.set(unit, slot)
        const fileOffset = e.offset + unit * slotBytes
        ranges.push(fileOffset, Math.min(slotBytes, e.paddedLength - unit * slotBytes), stagingOffset + slot * slotBytes)
      }
      ids[i] = BigInt(slot * this.rowsPerPage + (id % this.rowsPerPage))
    }
    return new Float64Array(ranges)
  }

  /** Op ranges of the applied program, for profiling. */
  get ranges(): { layerBegin: readonly number[]; layerEnd: readonly number[]; ops: number } | undefined {
    const a = this.active
    return a === undefined ? undefined : { layerBegin: a.layerBegin, layerEnd: a.layerEnd, ops: a.ops }
  }

  dispose(): void {
    this.session?.dispose()
    this.session = undefined
    this.active = undefined
  }

  private live(what: string): NativeSession {
    if (this.session === undefined) throw new DisposedError(what)
    return this.session
  }
}
