// SPDX-License-Identifier: Apache-2.0
// The ExecutionPlan of an elastic sub-model (STI's layer-wise IO/compute pipeline, seed §5.5, as data for
// the one executor). One arena:
//
//   [resident | plan constants | preload | embedding rows | staging | activations]
//   resident     float32 parameters that never leave memory (LayerNorms, biases, position embeddings,
//                pooler, classifier), read once; the word-embedding table too when it cannot be read
//                by rows (ElasticArena.onDemand false)
//   constants    the [CLS] index and the constant GEMM operands packed for the kernels, shared by all
//                plans of an engine (the region only grows, so the preload region after it stays put)
//   preload      the preload buffer: shard versions the plan keeps across calls (4 KiB-aligned)
//   embedding    the 4 KiB pages holding one inference's token rows (the run's input loads)
//   staging      a ring of `window` layer slots for the shard versions read per inference
//   activations  the sub-model program's activations, including each layer's dequantized float32
//                weights (outputs of DequantizeLayer, planned like any activation)
//
// The load queue: one job per layer, its staged shard versions in order; layer k's first op needs job
// k (and the jobs before it), job k waits for the last op of layer k - window (whose staging slot it
// reuses), and the first jobs for the embedding rows' Gather. The 'load-then-execute' baseline waits for
// every job before the first op.
import { alignUp } from '../../align.js'
import { ArgumentError } from '../../errors.js'
import type { DType } from '../../model/dtype.js'
import type { EncoderConfig } from '../../model/encoder-config.js'
import { inferGraph } from '../../model/infer-graph.js'
import type { ExternalTensor, TensorData } from '../../model/ir.js'
import { elasticOps } from '../../model/ops/elastic-ops.js'
import type { Prepack } from '../../model/ops/op-def.js'
import { prepackKey } from '../../model/constant-data.js'
import { shardBlobName } from '../../package/elastic-manifest.js'
import type { BlobEntry } from '../../package/index.js'
import type { ExecutionPlan, LoadQueue, ResidentWrite } from '../execution-plan.js'
import { buildProgram } from '../program-builder.js'
import { elasticBuffers, type NamedRange } from './elastic-buffers.js'
import { blobName, buildSubmodelGraph } from './submodel-graph.js'
import type { ElasticSchedule } from './types.js'

export const page = 4096

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
   * k waits until layer k - W has computed and reuses its slot (staging-window.ts picks the smallest W
   * that does not delay the planned pipeline).
   */
  readonly window?: number
  /** Default 'pipelined'; 'load-then-execute' reads every job before the first op (a baseline). */
  readonly schedule?: ElasticSchedule
}

/** The arena's fixed part, the same for every plan of an engine. */
export interface ElasticArena {
  readonly path: string
  readonly config: EncoderConfig
  readonly blobs: ReadonlyMap<string, BlobEntry>
  /** Resident parameters: name -> arena offset and dims. */
  readonly resident: ReadonlyMap<string, { readonly offset: number; readonly dims: readonly number[] }>
  /** End of the resident region (page-aligned). */
  readonly residentBytes: number
  /** The word-embedding table stays on disk; each inference reads the pages of its tokens' rows. */
  readonly onDemand: boolean
  readonly rowsPerPage: number
  readonly pagesPerRow: number
}

/**
 * A package's arena: the resident parameters' places, and whether the word embeddings are read by rows
 * ('on-demand', where a row's bytes divide a page or are whole pages) or resident.
 */
export function elasticArena(path: string, config: EncoderConfig, blobs: ReadonlyMap<string, BlobEntry>, embeddings?: 'on-demand' | 'resident'): ElasticArena {
  const rowBytes = config.hidden * 4
  const onDemand = embeddings !== 'resident' && (page % rowBytes === 0 || rowBytes % page === 0)
  const resident = new Map<string, { offset: number; dims: readonly number[] }>()
  let at = 0
  for (const b of blobs.values()) {
    if (b.kind !== 'resident' || (onDemand && b.name === 'emb.word')) continue
    resident.set(b.name, { offset: at, dims: b.dims ?? [b.length / 4] })
    at += alignUp(b.length, 64)
  }
  return { path, config, blobs, resident, residentBytes: alignUp(at, page), onDemand, rowsPerPage: Math.max(1, page / rowBytes), pagesPerRow: Math.max(1, rowBytes / page) }
}

/**
 * The plan-constants region: packed operand key -> offset, growing from the end of the resident region.
 * `pack` transforms a resident tensor into a kernel's packed form (the kernels' prepack, native).
 */
export interface PackedConstants {
  readonly offsets: Map<string, number>
  end: number
  readonly pack: (key: string, t: ExternalTensor, prepack: Prepack, node: string) => TensorData
}

/** A plan's layout and ExecutionPlan (the resident writes of the whole plan; see `applyDelta`). */
export interface ElasticLayout {
  readonly runPlan: RunPlan
  readonly exec: ExecutionPlan
  /** Per layer: [fileOffset, length, arenaOffset] triples of its IO job (empty: all preloaded). */
  readonly jobs: readonly Float64Array[]
  /** Loads of the queue before each layer's job, and one past the last (prefix sums of job ranges). */
  readonly jobStart: readonly number[]
  readonly window: number
  /** Op ranges: embeddings [0, layerBegin[0]), layer k [layerBegin[k], layerEnd[k]), head after. */
  readonly layerBegin: readonly number[]
  readonly layerEnd: readonly number[]
  readonly embeddingOffset: number
  readonly preloadBytes: number
  readonly stagingBytes: number
  /** Preloaded shard versions: [blob name, entry, arena offset]. */
  readonly preloadWanted: ReadonlyArray<readonly [string, BlobEntry, number]>
}

/** The plan's layout; grows `constants` when it packs an operand no plan before it did. */
export function elasticLayout(arena: ElasticArena, plan: RunPlan, constants: PackedConstants): ElasticLayout {
  const c = arena.config
  if (plan.depth < 1 || plan.depth > c.layers || plan.width < 1 || plan.width > c.heads) {
    throw new ArgumentError(`sub-model ${plan.depth}x${plan.width} is outside the ${c.layers}x${c.heads} model`)
  }
  if (plan.seq < 2 || plan.seq > c.maxPositions) throw new ArgumentError(`sequence length ${plan.seq} is outside 2..${c.maxPositions}`)
  // When a plan packs an operand no plan before it did, the constants region grows into where this
  // layout put the preload region: lay it out again with everything after the region moved up (once per
  // new operand: the plans of one encoder pack the same operands).
  for (;;) {
    const end = constants.end
    const layout = layoutOnce(arena, plan, constants)
    if (constants.end === end) return layout
  }
}

function layoutOnce(arena: ElasticArena, plan: RunPlan, constants: PackedConstants): ElasticLayout {
  const c = arena.config
  const blob = (l: number, j: number): BlobEntry => {
    const b = arena.blobs.get(shardBlobName(l, j, plan.bits[l]![j]!))
    if (b === undefined) throw new ArgumentError(`the package has no ${plan.bits[l]![j]}-bit version of layer ${l} shard ${j}`)
    return b
  }
  const clsOffset = arena.residentBytes
  let at = alignUp(constants.end, page)
  const where = new Map<string, { offset: number; entry: BlobEntry }>()
  const preloadBegin = at
  const preloadWanted: Array<[string, BlobEntry, number]> = []
  for (let l = 0; l < plan.depth; l++) {
    for (let j = 0; j < plan.width; j++) {
      if (!plan.preloaded[l]![j]) continue
      const e = blob(l, j)
      where.set(blobName(l, j), { offset: at, entry: e })
      preloadWanted.push([e.name, e, at])
      at += e.paddedLength
    }
  }
  const preloadBytes = at - preloadBegin
  // On-demand embeddings: one staging slot per distinct page (or row, for rows of whole pages).
  const embeddingOffset = at
  const embeddingSlots = arena.onDemand ? Math.min(plan.seq, Math.ceil(c.vocab / arena.rowsPerPage)) : 0
  at += embeddingSlots * arena.pagesPerRow * page
  // Staging: layer l's staged shards go to slot l mod window, sized for the largest layer that uses it.
  const window = Math.min(plan.depth, Math.max(1, plan.window ?? plan.depth))
  const stagingBegin = at
  const slotBytes = new Array<number>(window).fill(0)
  for (let l = 0; l < plan.depth; l++) {
    let bytes = 0
    for (let j = 0; j < plan.width; j++) if (!plan.preloaded[l]![j]) bytes += blob(l, j).paddedLength
    slotBytes[l % window] = Math.max(slotBytes[l % window]!, bytes)
  }
  const slotAt: number[] = []
  for (let w = 0; w < window; w++) {
    slotAt.push(at)
    at += slotBytes[w]!
  }
  const jobs: Float64Array[] = []
  const staged: NamedRange[][] = []
  for (let l = 0; l < plan.depth; l++) {
    const r: number[] = []
    const names: NamedRange[] = []
    let p = slotAt[l % window]!
    for (let j = 0; j < plan.width; j++) {
      if (plan.preloaded[l]![j]) continue
      const e = blob(l, j)
      where.set(blobName(l, j), { offset: p, entry: e })
      r.push(e.offset, e.paddedLength, p)
      names.push([e.name, p, e.paddedLength])
      p += e.paddedLength
    }
    jobs.push(new Float64Array(r))
    staged.push(names)
  }
  const stagingBytes = at - stagingBegin
  const activationBase = alignUp(at, page)
  const locate = (name: string, dtype: DType, dims: readonly number[]): ExternalTensor => {
    const b = where.get(name)
    if (b !== undefined) return { dtype: 'uint8', dims: [b.entry.length], path: 'arena', offset: b.offset, length: b.entry.length }
    if (name === 'head.cls') return { dtype, dims, path: 'arena', offset: clsOffset, length: 8 }
    if (name === 'emb.word' && arena.onDemand) {
      const rows = embeddingSlots * arena.rowsPerPage
      return { dtype, dims: [rows, c.hidden], path: 'arena', offset: embeddingOffset, length: rows * c.hidden * 4 }
    }
    const r = arena.resident.get(name)
    if (r === undefined) throw new ArgumentError(`the package has no resident tensor '${name}'`)
    return { dtype, dims, path: 'arena', offset: r.offset, length: dims.reduce((p, d) => p * d, 1) * 4 }
  }
  const graph = buildSubmodelGraph(c, plan, locate)
  const graphInputs = new Map([
    ['ids', { dtype: 'int64' as const, dims: [plan.seq] }],
    ['mask', { dtype: 'float32' as const, dims: [plan.seq] }],
  ])
  const inferred = inferGraph(graph, graphInputs, { concrete: true, internalOps: elasticOps })
  const packed = new Map<string, Extract<ResidentWrite, { kind: 'data' }>>()
  const built = buildProgram(graph, inferred, (name, _v, prepack) => {
    const t = graph.initializers.get(name) as ExternalTensor
    if (prepack === undefined) return { offset: t.offset, dtype: t.dtype, dims: t.dims }
    const key = `${t.offset}:${t.dims.join('x')}${prepackKey(prepack)}`
    const data = constants.pack(key, t, prepack, name)
    let offset = constants.offsets.get(key)
    if (offset === undefined) {
      offset = constants.end
      constants.offsets.set(key, offset)
      constants.end = alignUp(constants.end + data.data.byteLength, 64)
    }
    packed.set(key, { kind: 'data', offset, data: data.data })
    return { offset, dtype: data.dtype, dims: data.dims }
  })
  const ops = built.opNodes.length
  const layerBegin: number[] = []
  const layerEnd: number[] = []
  built.opNodes.forEach((n, i) => {
    const m = /^L(\d+)\//.exec(n)
    if (m === null) return
    const l = Number(m[1])
    layerBegin[l] ??= i
    layerEnd[l] = i + 1
  })
  const jobStart = [0]
  for (const job of jobs) jobStart.push(jobStart[jobStart.length - 1]! + job.length / 3)
  const arenaBytes = activationBase + built.activationBytes
  const resident: ResidentWrite[] = [
    { kind: 'data', offset: clsOffset, data: new BigInt64Array([0n]) },
    ...packed.values(),
    { kind: 'file', path: arena.path, ranges: new Float64Array(preloadWanted.flatMap(([, e, offset]) => [e.offset, e.paddedLength, offset])), mode: 'buffered' },
  ]
  const loads = loadQueue(arena.path, jobs, jobStart, window, layerBegin, layerEnd, ops, plan.schedule ?? 'pipelined', arena.onDemand)
  const parts = {
    resident: [
      ...Array.from(arena.resident, ([name, r]): NamedRange => [name, r.offset, arena.blobs.get(name)!.length]),
      ['head.cls', clsOffset, 8] as const,
      ...Array.from(packed, ([key, w]): NamedRange => [key, w.offset, w.data.byteLength]),
    ],
    preloaded: preloadWanted.map(([name, e, offset]): NamedRange => [name, offset, e.paddedLength]),
    ...(embeddingSlots > 0 ? { rows: ['word-embedding rows', embeddingOffset, stagingBegin - embeddingOffset] as const } : {}),
    staged,
    activations: built.buffers,
  }
  const exec: ExecutionPlan = {
    ...built,
    arenaBytes,
    keepBytes: arena.residentBytes,
    activationBase,
    resident,
    loads,
    regions: [
      { name: 'resident', offset: 0, bytes: arena.residentBytes },
      { name: 'constants', offset: arena.residentBytes, bytes: constants.end - arena.residentBytes },
      { name: 'preload', offset: preloadBegin, bytes: preloadBytes },
      { name: 'embedding rows', offset: embeddingOffset, bytes: stagingBegin - embeddingOffset },
      { name: 'staging', offset: stagingBegin, bytes: stagingBytes },
      { name: 'activations', offset: activationBase, bytes: built.activationBytes },
    ],
    buffers: elasticBuffers(parts, loads, jobStart, { layerBegin, layerEnd, ops }),
  }
  return { runPlan: plan, exec, jobs, jobStart, window, layerBegin, layerEnd, embeddingOffset, preloadBytes, stagingBytes, preloadWanted }
}

/**
 * The layer jobs as one queue with STI's edges (see the header). With on-demand embeddings the jobs the
 * staging window does not hold back wait for op 0, the embedding Gather: the rows it reads are the run's
 * input loads, and reading shards at the same time would delay them and so every op (the planner models
 * both lanes starting after the embedding read).
 */
function loadQueue(
  path: string,
  jobs: readonly Float64Array[],
  jobStart: readonly number[],
  window: number,
  layerBegin: readonly number[],
  layerEnd: readonly number[],
  ops: number,
  schedule: ElasticSchedule,
  afterEmbeddings: boolean,
): LoadQueue {
  const loads = jobStart[jobs.length]!
  const ranges = new Float64Array(loads * 3)
  const after = new Int32Array(loads).fill(afterEmbeddings && schedule === 'pipelined' ? 0 : -1)
  jobs.forEach((job, l) => {
    ranges.set(job, jobStart[l]! * 3)
    if (l >= window) after.fill(layerEnd[l - window]! - 1, jobStart[l]!, jobStart[l + 1]!)
  })
  const need = new Int32Array(ops)
  if (schedule === 'load-then-execute') need.fill(loads)
  else {
    jobs.forEach((_, l) => need.fill(jobStart[l + 1]!, layerBegin[l]!, layerEnd[l]!))
    need.fill(loads, layerEnd[jobs.length - 1]!)
  }
  return { path, ranges, after, need }
}

/** What an applied plan left in the arena that a later plan may use without writing it again. */
export interface ArenaContent {
  /** Preloaded blob name -> arena offset. */
  readonly preload: ReadonlyMap<string, number>
  /** Offsets of the plan constants (packed operands, the CLS id) written: each offset holds one content for good. */
  readonly constants: ReadonlySet<number>
}

export const emptyArenaContent: ArenaContent = { preload: new Map(), constants: new Set() }

/**
 * The plan to apply after others left `before` in the arena, and what is in it once applied. Preloaded
 * versions already at their planned offset are kept and not read again. Plan constants already written
 * are not written again: the constants region only grows (a new operand goes after the others), so a
 * constant's offset always holds that constant, unless a layout made before the region grew put its
 * preload, staging or activations there; a layout therefore forgets the constants at or past the end of
 * its own constants region. Each re-plan used to rewrite ~280 KB of constants through a write batch.
 */
export function applyDelta(layout: ElasticLayout, residentBytes: number, before: ArenaContent): { exec: ExecutionPlan; content: ArenaContent } {
  const exec = layout.exec
  const constantsEnd = exec.regions.find((r) => r.name === 'constants')
  const end = constantsEnd === undefined ? residentBytes : constantsEnd.offset + constantsEnd.bytes
  const constants = new Set([...before.constants].filter((offset) => offset < end))
  let keepBytes = residentBytes
  const ranges: number[] = []
  for (const [name, e, offset] of layout.preloadWanted) {
    if (before.preload.get(name) === offset) keepBytes = Math.max(keepBytes, offset + e.paddedLength)
    else ranges.push(e.offset, e.paddedLength, offset)
  }
  const resident: ResidentWrite[] = []
  for (const w of exec.resident) {
    if (w.kind === 'file') resident.push({ ...w, ranges: new Float64Array(ranges) })
    else if (w.kind !== 'data') resident.push(w)
    else if (constants.has(w.offset)) keepBytes = Math.max(keepBytes, w.offset + w.data.byteLength)
    else {
      resident.push(w)
      constants.add(w.offset)
    }
  }
  const preload = new Map(layout.preloadWanted.map(([name, , offset]) => [name, offset] as [string, number]))
  return { exec: { ...exec, keepBytes: Math.min(keepBytes, exec.arenaBytes), resident }, content: { preload, constants } }
}

/**
 * The input loads of token ids `ids` (distinct pages of the word-embedding table, in first-use order,
 * into the embedding rows region), with `ids` rewritten in place to rows of that region.
 */
export function embeddingRows(arena: ElasticArena, layout: ElasticLayout, ids: BigInt64Array): Float64Array {
  const e = arena.blobs.get('emb.word')!
  const slotOf = new Map<number, number>()
  const ranges: number[] = []
  const slotBytes = arena.pagesPerRow * page
  for (let i = 0; i < ids.length; i++) {
    const id = Number(ids[i])
    const unit = Math.floor(id / arena.rowsPerPage) // page (or row, for rows of whole pages)
    let slot = slotOf.get(unit)
    if (slot === undefined) {
      slot = slotOf.size
      slotOf.set(unit, slot)
      ranges.push(e.offset + unit * slotBytes, Math.min(slotBytes, e.paddedLength - unit * slotBytes), layout.embeddingOffset + slot * slotBytes)
    }
    ids[i] = BigInt(slot * arena.rowsPerPage + (id % arena.rowsPerPage))
  }
  return new Float64Array(ranges)
}
