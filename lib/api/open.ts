// SPDX-License-Identifier: Apache-2.0
// open(): an ONNX model (Engine: all weights in memory) or a package from `flexpipe prepare`
// (BudgetedEngine: runs within a memory budget), told apart by the file's first bytes.
import { open as openFile } from 'node:fs/promises'
import { ArgumentError, IOError } from '../errors.js'
import { magic } from '../package/format.js'
import { BudgetedEngine, type PackageOpenOptions } from '../runtime/budgeted-engine.js'
import { ElasticEngine, type ElasticOpenOptions } from '../runtime/elastic-engine.js'
import { Engine, type OpenOptions } from '../runtime/engine.js'

async function isPackage(path: string): Promise<boolean> {
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

const packageOnly = ['memoryBudget', 'direct', 'ioBandwidth', 'preload', 'pin', 'staticPlan', 'verify'] as const

/**
 * Opens an elastic package (`flexpipe prepare --elastic`) to answer within `targetLatencyMs` (STI).
 * A package without elastic shards is rejected with an ArgumentError saying so.
 */
export function openElastic(path: string, options: ElasticOpenOptions): Promise<ElasticEngine> {
  return ElasticEngine.open(path, options)
}

/** Opens a package (.fpk) for memory-budgeted inference. */
export function openPackage(path: string, options?: PackageOpenOptions): Promise<BudgetedEngine> {
  return BudgetedEngine.open(path, options)
}

/**
 * Opens an ONNX model (Engine, every weight in memory) or, for a path ending in .fpk, a package made by
 * `flexpipe prepare` (BudgetedEngine, within `memoryBudget`). The return type follows the extension, and
 * so does the check: a package under another name is rejected (open it with openPackage()).
 */
export function open(path: `${string}.fpk`, options: ElasticOpenOptions): Promise<ElasticEngine>
export function open(path: `${string}.fpk`, options?: PackageOpenOptions): Promise<BudgetedEngine>
export function open(path: string, options?: OpenOptions): Promise<Engine>
export async function open(
  path: string,
  options: (OpenOptions & PackageOpenOptions) | ElasticOpenOptions = {},
): Promise<Engine | BudgetedEngine | ElasticEngine> {
  if (options !== null && typeof options === 'object' && 'targetLatencyMs' in options && options.targetLatencyMs !== undefined) {
    if (typeof path === 'string' && !path.endsWith('.fpk') && !(await isPackage(path))) {
      throw new ArgumentError(`targetLatencyMs: ${path} is not a package; make an elastic one with \`flexpipe prepare --elastic <model folder> -o model.fpk\``)
    }
    return ElasticEngine.open(path, options)
  }
  const o = options as OpenOptions & PackageOpenOptions
  if (typeof path === 'string' && path.endsWith('.fpk')) return BudgetedEngine.open(path, o)
  if (await isPackage(path)) {
    throw new ArgumentError(`${path} is a flexpipe package: open it with openPackage(), or name it *.fpk`)
  }
  const given = packageOnly.filter((k) => o[k] !== undefined)
  if (given.length > 0) {
    throw new ArgumentError(`${given.join(', ')}: only packages run within a memory budget; make one with \`flexpipe prepare ${path} -o model.fpk\` and open that`)
  }
  return Engine.open(path, o)
}
