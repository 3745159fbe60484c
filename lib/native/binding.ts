// SPDX-License-Identifier: Apache-2.0
// Loads the addon (prebuilt or locally built, via node-gyp-build) and types its exports.
// Nothing else in lib/ imports the .node file.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AddonLoadError } from '../errors.js'

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
}

export interface NativeSession {
  resize(bytes: number, keepBytes: number): void
  write(offset: number, data: ArrayBufferView): void
  read(offset: number, data: ArrayBufferView): void
  addProgram(program: Float64Array): number
  removeProgram(id: number): void
  run(
    program: number,
    activationBase: number,
    inputs: Array<[number, ArrayBufferView]>,
    outputs: Array<[number, ArrayBufferView]>,
    profile?: boolean,
  ): Promise<Float64Array | undefined>
  readFile(path: string, ranges: Float64Array): Promise<void>
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

/** Test-only entry points (native/addon/testing*.cc): kernel variants by ISA name. */
export interface NativeTesting {
  isas(): string[]
  [entry: string]: (...args: never[]) => unknown
}

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
  _testing: NativeTesting
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

function load(): NativeBinding {
  const require = createRequire(import.meta.url)
  const override = process.env.FLEXPIPE_ADDON
  try {
    if (override) return require(override) as NativeBinding
    const gypBuild = require('node-gyp-build') as (dir: string) => unknown
    return gypBuild(root) as NativeBinding
  } catch (err) {
    throw new AddonLoadError(
      `failed to load the flexpipe addon for ${process.platform}-${process.arch} ` +
        `(Node ${process.version}, N-API ${process.versions.napi}, package ${root}` +
        (override ? `, FLEXPIPE_ADDON=${override}` : '') +
        '): no prebuilt binary matched and no local build was found. ' +
        'Run `npm rebuild flexpipe` (needs a C++17 compiler, python3 and make) or install on a supported platform ' +
        '(linux-x64, linux-arm64).',
      { cause: err },
    )
  }
}

let cached: NativeBinding | undefined

/** The addon, loaded on first use. */
export function binding(): NativeBinding {
  cached ??= load()
  return cached
}

let opIndex: Map<string, number> | undefined

/** Native op code of a native op name (codes are the addon's table order). */
export function nativeOpCode(name: string): number | undefined {
  opIndex ??= new Map(binding().opNames().map((n, i) => [n, i]))
  return opIndex.get(name)
}
