// SPDX-License-Identifier: Apache-2.0
// The checks of open()'s options, for each kind of file: which options apply, and each value's type and
// range. Messages name the option, what it takes and what arrived (`threads: expected an integer 1..256,
// got 0`); an option that is unknown or does not apply to the file names itself and says what to do.
import { availableParallelism } from 'node:os'
import { ArgumentError, OptionError } from './errors.js'

/** What open() found the file to be. */
export type ModelKind = 'onnx' | 'budget' | 'elastic'

const optionNames: Record<ModelKind, readonly string[]> = {
  onnx: ['threads', 'io', 'maxPlans', 'dims', 'buckets'],
  budget: ['threads', 'io', 'memoryBudget', 'onAutoBudget', 'direct', 'ioBandwidth', 'preload', 'pin', 'staticPlan', 'verify', 'readGeometry'],
  elastic: ['threads', 'io', 'targetLatencyMs', 'preloadBytes', 'preloadBits', 'direct', 'bandwidth', 'seq', 'planner', 'plannerBits', 'deviceProfile', 'adaptive', 'openCalibrationRuns'],
}

const kindName: Record<ModelKind, string> = { onnx: 'an ONNX model, not a package', budget: 'a memory-budget package', elastic: 'an elastic package' }

/** What to do with options of `other` kind given for a file of `kind`. */
function remedy(kind: ModelKind, other: ModelKind, path: string): string {
  if (other === 'budget' && kind === 'onnx') return `only packages run within a memory budget; make one with \`flexpipe prepare ${path} -o model.fpk\` and open that`
  if (other === 'elastic' && kind === 'onnx') return 'only elastic packages answer within a target latency; make one with `flexpipe prepare --elastic <model folder> -o model.fpk`'
  if (other === 'elastic') return 'it has no elastic shards and runs within a memory budget (memoryBudget), not to a target latency; for a target, prepare the transformer with `flexpipe prepare --elastic <model folder>`'
  return 'it has no memory-budget plan and answers within a target latency (targetLatencyMs) with a preload buffer (preloadBytes), not within a memory budget'
}

/**
 * The options as a record, after checking that each one set (not undefined) applies to a file of `kind`:
 * an OptionError names the unknown options, or those that apply only to another kind of file.
 */
export function checkOptionNames(options: unknown, kind: ModelKind, path: string): Readonly<Record<string, unknown>> {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new ArgumentError(`options: expected an object, got ${options === null ? 'null' : typeof options}`)
  const set = Object.entries(options).filter(([, v]) => v !== undefined).map(([k]) => k)
  const unknown = set.filter((k) => !Object.values(optionNames).some((names) => names.includes(k)))
  if (unknown.length > 0) {
    throw new OptionError(unknown, `unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: for ${kindName[kind].split(',')[0]} open() takes ${optionNames[kind].join(', ')}`)
  }
  for (const other of ['onnx', 'budget', 'elastic'] as const) {
    const wrong = set.filter((k) => !optionNames[kind].includes(k) && optionNames[other].includes(k))
    if (other !== kind && wrong.length > 0) throw new OptionError(wrong, `${wrong.join(', ')}: ${path} is ${kindName[kind]}; ${remedy(kind, other, path)}`)
  }
  return options as Record<string, unknown>
}

export interface CheckedCommon {
  readonly threads: number
  readonly io: 'auto' | 'uring' | 'pread'
}

/** threads (default: the cores, at most 4) and io (default 'auto'). */
export function checkCommon(o: Readonly<Record<string, unknown>>): CheckedCommon {
  const threads = o.threads ?? Math.min(availableParallelism(), 4)
  if (!Number.isInteger(threads) || (threads as number) < 1 || (threads as number) > 256) throw new ArgumentError(`threads: expected an integer 1..256, got ${String(o.threads)}`)
  const io = o.io ?? 'auto'
  if (io !== 'auto' && io !== 'uring' && io !== 'pread') throw new ArgumentError(`io: expected 'auto', 'uring' or 'pread', got ${String(io)}`)
  return { threads: threads as number, io }
}

/** A boolean option, or its default. */
export function checkBoolean(o: Readonly<Record<string, unknown>>, name: string, fallback: boolean): boolean {
  const v = o[name]
  if (v !== undefined && typeof v !== 'boolean') throw new ArgumentError(`${name}: expected a boolean, got ${String(v)}`)
  return (v as boolean | undefined) ?? fallback
}

/** An integer option in [min, max], or its default; `what` describes it in the message. */
export function checkInteger(o: Readonly<Record<string, unknown>>, name: string, min: number, max: number, fallback: number, what = `an integer ${min}..${max}`): number {
  const v = o[name] ?? fallback
  if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) throw new ArgumentError(`${name}: expected ${what}, got ${String(o[name])}`)
  return v as number
}

/** A finite positive number, or undefined when not set. */
export function checkPositive(o: Readonly<Record<string, unknown>>, name: string, what: string): number | undefined {
  const v = o[name]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) throw new ArgumentError(`${name}: expected ${what} > 0, got ${String(v)}`)
  return v
}

/** One of `values`, or the default. */
export function checkChoice<T extends string>(o: Readonly<Record<string, unknown>>, name: string, values: readonly T[], fallback: T): T {
  const v = o[name] ?? fallback
  if (!values.includes(v as T)) throw new ArgumentError(`${name}: expected ${values.map((x) => `'${x}'`).join(', ')}, got ${String(o[name])}`)
  return v as T
}
