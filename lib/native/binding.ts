// SPDX-License-Identifier: Apache-2.0
// Loads the addon (prebuilt or locally built, via node-gyp-build) and types its exports.
// Nothing else in lib/ imports the .node file.
import { createRequire } from 'node:module'
import { AddonLoadError } from '../errors.js'
import { packageRoot } from '../package-root.js'

/** A tensor argument of runOp: dtype is the ONNX/native code. */
export interface NativeTensor {
  dtype: number
  dims: readonly number[]
  data: ArrayBufferView
}

export interface NativeStats {
  arenaBytes: number
  arenaHighWater: number
  reader: string
  threads: number
  /** Bytes read by successful readFile calls since the session was created. */
  bytesRead: number
  /** Successful readFile calls that really used O_DIRECT. */
  directReads: number
}

/** Options of NativeSession.readFile. */
export interface NativeReadOptions {
  /**
   * Read with O_DIRECT (bypassing the page cache). Falls back to a buffered read for the call when
   * the file system refuses it (EINVAL) or any range's file offset, length or arena address is not
   * a multiple of 4096.
   */
  direct?: boolean
  /** Emulated device bandwidth in bytes per second (> 0, finite): the call takes at least bytes / bandwidth. */
  bandwidth?: number
  /** Largest read request, a multiple of 4096 from 4 KiB to 64 MiB (default 256 KiB). */
  chunkBytes?: number
  /** Requests kept in flight (io_uring) or pread threads, 1..64 (pread: at most 16; default 8). */
  queueDepth?: number
}

/** What a readFile call did. */
export interface NativeReadResult {
  /** Whether O_DIRECT was really used. */
  direct: boolean
  bytes: number
  /** Wall time of the call in milliseconds, throttle included. */
  ms: number
}

/** What a runPipeline call did. */
export interface NativePipelineResult extends NativeReadResult {
  /** Per-op milliseconds when profiling (a wait for loads not included), else undefined. */
  ops: Float64Array | undefined
  /** How long the ops waited for loads, and the loads for ops (ms). */
  computeWaitMs: number
  loadWaitMs: number
  /** Per range: when its last byte was in (ms since the run's start). */
  loadEndMs: Float64Array
  /** Per op, when profiling: when it started (after waiting for its loads) and ended (ms since the run's start). */
  opStartMs: Float64Array | undefined
  opEndMs: Float64Array | undefined
}

/**
 * The native session. It has two lanes: one run (compute) and one readFile (load) may be in flight at
 * the same time, or one runPipeline, which takes both; a second call on a busy lane, and
 * resize/write/read/addProgram/removeProgram/setThreads/dispose while either lane is busy, throw
 * ERR_FLEXPIPE_BUSY. The caller keeps the arena ranges of an overlapping run and readFile disjoint.
 */
export interface NativeSession {
  resize(bytes: number, keepBytes: number): void
  write(offset: number, data: ArrayBufferView): void
  /**
   * Writes a plan's resident data on the session's threads, off the JS thread
   * (native/runtime/write_batch.h): copies, and prepack transforms whose result goes straight to
   * arena[offset]. Every job is checked (transform, weight, ints, arena bounds) before any is written.
   * Takes the compute lane.
   */
  writeBatch(jobs: readonly WriteBatchJob[]): Promise<void>
  read(offset: number, data: ArrayBufferView): void
  addProgram(program: Float64Array): number
  removeProgram(id: number): void
  run(
    program: number,
    activationBase: number,
    inputs: Array<[number, ArrayBufferView]>,
    outputs: Array<[number, ArrayBufferView]>,
    profile?: boolean,
    /** First op to run (default 0). Pass inputs only with the first range of a program. */
    opBegin?: number,
    /** One past the last op to run (default: the program's op count). Pass outputs only with the last range. */
    opEnd?: number,
  ): Promise<Float64Array | undefined>
  /** ranges: [fileOffset, length, arenaOffset] triples. */
  readFile(path: string, ranges: Float64Array, options?: NativeReadOptions): Promise<NativeReadResult>
  /**
   * Runs the whole program while reading ranges of path into the arena (native/runtime/pipeline_gate.h):
   * range j starts once op after[j] is done (-1: at once; ranges start in order), op k runs once ranges
   * [0, need[k]) are in. A schedule that could deadlock (an op a range waits for needs that range or a
   * later one) throws. With options.bandwidth each range completes no earlier than a device of that
   * speed would deliver it. A failing read rejects with its error after the ops stop at their next wait.
   */
  runPipeline(
    program: number,
    activationBase: number,
    inputs: Array<[number, ArrayBufferView]>,
    outputs: Array<[number, ArrayBufferView]>,
    profile: boolean,
    path: string,
    ranges: Float64Array,
    after: Int32Array,
    need: Int32Array,
    options?: NativeReadOptions,
  ): Promise<NativePipelineResult>
  stats(): NativeStats
  setThreads(threads: number): void
  dispose(): void
}

export interface NativeInfo {
  arch: string
  isa: string
  cpuFeatures: string
  openmp: boolean
  maxThreads: number
  liburing: boolean
  ioUring: string
}

export interface PrepackResult {
  dtype: number
  dims: number[]
  data: ArrayBuffer
}

/** What quantizeLayer returns (native/runtime/quant/outlier_quantize.h, FPQ1 layout in lib/package/quant-blob.ts). */
export interface QuantizedLayer {
  /** One FPQ1 blob per shard, in shard order (shard s = weights [s*n/shardCount, (s+1)*n/shardCount)). */
  blobs: Uint8Array[]
  /** Mean and population standard deviation of the layer (float64). */
  mean: number
  std: number
  /** Outliers over all shards. */
  outliers: number
  /** The 2^bits centroids every blob carries. */
  centroids: Float32Array
}

/** Test-only entry points (native/addon/testing*.cc): kernel variants by ISA name. */
export interface NativeTesting {
  isas(): string[]
  /**
   * Allocations made by flexpipe's own code inside run/readFile work since the last reset. enabled is
   * true only in the audit build (cmake-js with FLEXPIPE_ALLOC_AUDIT=1); elsewhere allocations stay 0.
   */
  allocAudit(): { enabled: boolean; allocations: number }
  allocAuditReset(): void
  /** Makes 2n allocations inside worker work (n malloc + n new[]): the audit's positive control. */
  allocAuditProbe(n: number): Promise<void>
  [entry: string]: (...args: never[]) => unknown
}

/** One job of NativeSession.writeBatch: data's bytes, or the transform of the weight {dtype, dims, data}. */
export type WriteBatchJob =
  | { readonly offset: number; readonly data: ArrayBufferView }
  | { readonly offset: number; readonly transform: string; readonly dtype: number; readonly dims: readonly number[]; readonly data: ArrayBufferView; readonly ints: readonly number[] }

export interface NativeBinding {
  Session: new (threads: number, io: 'auto' | 'uring' | 'pread') => NativeSession
  info(): NativeInfo
  opNames(): string[]
  runOp(
    name: string,
    inputs: ReadonlyArray<NativeTensor | null>,
    outputs: readonly NativeTensor[],
    ints: readonly number[],
    floats: readonly number[],
    threads?: number,
  ): void
  prepack(name: string, weight: NativeTensor, ints: readonly number[]): PrepackResult
  /** The dtype and dims prepack() would return, without running the transform. */
  prepackShape(name: string, weight: NativeTensor, ints: readonly number[]): { dtype: number; dims: number[] }
  /**
   * A file's bytes as a private copy-on-write memory mapping (unmapped when collected; a plain read
   * where there is no mmap). Throws an error with code ERR_FLEXPIPE_IO.
   */
  mapFile(path: string): ArrayBuffer
  /**
   * Releases a mapping of mapFile now: the ArrayBuffer is detached (its views have length 0) and its
   * pages leave the process. False when empty or released already; TypeError for other buffers.
   */
  unmapFile(buffer: ArrayBuffer): boolean
  /**
   * Gaussian outlier-aware quantization of one layer (the concatenation of its shards) into FPQ1 blobs,
   * synchronously, on up to info().maxThreads OpenMP threads. Weights whose Gaussian log-likelihood is
   * below `threshold` (default -4) are kept exactly; the others are cut by rank into 2^bits
   * equal-population clusters. Throws TypeError/RangeError for bad arguments (bits outside 2..8, a
   * length that is not a positive multiple of shardCount, a non-finite weight or threshold).
   */
  quantizeLayer(layer: Float32Array, shardCount: number, bits: number, threshold?: number): QuantizedLayer
  _testing: NativeTesting
}

const root = packageRoot

/** What to do about a failed load, from the loader's message. */
export function loadFailureAdvice(message: string): string {
  const missing = /(lib[\w.+-]+\.so[\w.]*): cannot open shared object file/.exec(message)?.[1]
  if (missing !== undefined) {
    const pkg = /^libgomp/.test(missing) ? 'libgomp1' : /^libstdc\+\+/.test(missing) ? 'libstdc++6' : /^liburing/.test(missing) ? 'liburing2' : undefined
    return `the binary needs ${missing}, which this system does not have` +
      (pkg ? `: install it (Debian, Ubuntu, Raspberry Pi OS: apt-get install ${pkg})` : '') +
      ', or rebuild from source with `npm rebuild flexpipe` (needs a C++17 compiler, python3 and make).'
  }
  if (/GLIBC_[\d.]+' not found/.test(message)) {
    return `the prebuilt binary needs a newer glibc than this system has (${message.match(/GLIBC_[\d.]+/)?.[0]}); ` +
      'rebuild from source with `npm rebuild flexpipe` (needs a C++17 compiler, python3 and make).'
  }
  return 'no prebuilt binary matched and no local build was found. ' +
    'Run `npm rebuild flexpipe` (needs a C++17 compiler, python3 and make) or install on a supported platform ' +
    `(linux-x64, linux-arm64 with glibc 2.34 or newer). The loader said: ${message.split('\n')[0]}`
}

function load(): NativeBinding {
  const require = createRequire(import.meta.url)
  const override = process.env.FLEXPIPE_ADDON
  try {
    if (override) return require(override) as NativeBinding
    const gypBuild = require('node-gyp-build') as (dir: string) => unknown
    return gypBuild(root) as NativeBinding
  } catch (err) {
    throw new AddonLoadError(`failed to load the flexpipe addon for ${process.platform}-${process.arch} ` +
      `(Node ${process.version}, N-API ${process.versions.napi}, package ${root}` +
      (override ? `, FLEXPIPE_ADDON=${override}` : '') + `): ${loadFailureAdvice(String((err as Error)?.message ?? err))}`, { cause: err })
  }
}

let cached: NativeBinding | undefined

/** The addon, loaded on first use. */
export function binding(): NativeBinding {
  cached ??= load()
  return cached
}
