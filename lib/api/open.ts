// SPDX-License-Identifier: Apache-2.0
// open(): the one entry point. It looks at what the file is, not at its name or the options: an ONNX
// model (Engine, every weight in memory), a memory-budget package from `flexpipe prepare`
// (BudgetedEngine), or an elastic package from `flexpipe prepare --elastic` (ElasticEngine: to a target
// latency when one is given, else the full model). Each engine rejects options that do not apply to it.
import { open as openFile } from 'node:fs/promises'
import { ArgumentError, IOError, PackageError } from '../errors.js'
import { magic } from '../package/format.js'
import { PackageReader } from '../package/index.js'
import { BudgetedEngine, type PackageOpenOptions } from '../runtime/budgeted-engine.js'
import { ElasticEngine, type ElasticOpenOptions } from '../runtime/elastic-engine.js'
import { Engine, type OpenOptions } from '../runtime/engine.js'
import type { ModelKind } from '../validate.js'

/** An opened model: `kind` says which engine it is. */
export type AnyEngine = Engine | BudgetedEngine | ElasticEngine

/** The options of every kind of file; each engine takes those of its kind (see validate.ts). */
export type AnyOpenOptions = OpenOptions & PackageOpenOptions & ElasticOpenOptions

async function startsWithMagic(path: string): Promise<boolean> {
  if (typeof path !== 'string' || path === '') throw new ArgumentError(`path: expected a file path, got ${String(path)}`)
  let h
  try {
    h = await openFile(path, 'r')
    const head = new Uint8Array(magic.length)
    const { bytesRead } = await h.read(head, 0, head.length, 0)
    return bytesRead === head.length && Buffer.from(head).toString('latin1') === magic
  } catch (err) {
    throw new IOError(`failed to read ${path}: ${(err as Error).message}`, { cause: err })
  } finally {
    await h?.close()
  }
}

/** What the file is: a package of either kind (by its manifest), else an ONNX model (its reader says if not). */
export async function modelKind(path: string): Promise<ModelKind> {
  if (!(await startsWithMagic(path))) return 'onnx'
  const reader = await PackageReader.open(path, { verify: 'header' })
  const kind = reader.manifest.meta.kind
  await reader.close()
  if (kind === 'flexpipe-model') return 'budget'
  if (kind === 'flexpipe-elastic') return 'elastic'
  throw new PackageError(`package ${path}: neither a model nor an elastic package (meta.kind ${JSON.stringify(kind)}); re-run flexpipe prepare`)
}

/** Opens an elastic package (`flexpipe prepare --elastic`): to `targetLatencyMs` (STI), or the full model without it. */
export function openElastic(path: string, options?: ElasticOpenOptions): Promise<ElasticEngine> {
  return ElasticEngine.open(path, options)
}

/** Opens a memory-budget package (`flexpipe prepare`). */
export function openPackage(path: string, options?: PackageOpenOptions): Promise<BudgetedEngine> {
  return BudgetedEngine.open(path, options)
}

/**
 * Opens an ONNX model, a memory-budget package or an elastic package, whichever the file is. Options
 * that do not apply to it are rejected with an OptionError naming them. A path ending in .onnx is typed
 * (and must be) an ONNX model; narrow any other result by its `kind`.
 */
export function open(path: string, options: ElasticOpenOptions & { readonly targetLatencyMs: number }): Promise<ElasticEngine>
export function open(path: `${string}.onnx`, options?: OpenOptions): Promise<Engine>
export function open(path: `${string}.fpk`, options?: PackageOpenOptions & ElasticOpenOptions): Promise<BudgetedEngine | ElasticEngine>
export function open(path: string, options?: AnyOpenOptions): Promise<AnyEngine>
export async function open(path: string, options?: AnyOpenOptions): Promise<AnyEngine> {
  const kind = await modelKind(path)
  // The overloads type a *.onnx path as an Engine: hold them to it.
  if (kind !== 'onnx' && path.endsWith('.onnx')) throw new ArgumentError(`${path} is a flexpipe package, not an ONNX model; name it *.fpk`)
  if (kind === 'budget') return BudgetedEngine.open(path, options)
  if (kind === 'elastic') return ElasticEngine.open(path, options)
  return Engine.open(path, options)
}
