// SPDX-License-Identifier: Apache-2.0
// The options of a memory-budget package's engine, and their checks (lib/validate.ts's field checks).
import { ArgumentError } from '../errors.js'
import type { AutoBudgetConstants } from '../plan/budget/auto-budget.js'
import { checkBoolean, checkChoice, checkCommon, checkOptionNames, checkPositive, type CheckedCommon } from '../validate.js'
import type { AutoBudgetChange } from './budget-follower.js'

export interface PackageOpenOptions {
  /** Threads for compute (OpenMP). Default: available cores, at most 4. */
  readonly threads?: number
  /** File reader: io_uring when available ('auto'), or 'uring' / 'pread'. */
  readonly io?: 'auto' | 'uring' | 'pread'
  /**
   * Bytes the engine may use (default: as much as the model needs with every weight resident), or
   * 'auto': follow the memory limit of the process's cgroup (else MemAvailable) and memory pressure,
   * re-planning between inferences (docs/auto-budget.md).
   */
  readonly memoryBudget?: number | 'auto'
  /** With memoryBudget 'auto': called after each automatic change of the budget or of its status. */
  readonly onAutoBudget?: (change: AutoBudgetChange) => void
  /** Read weights with O_DIRECT (cold IO, no page cache) where the file system allows. Default true. */
  readonly direct?: boolean
  /** Throttle weight reads to this many bytes per second (emulates an SD card or eMMC). */
  readonly ioBandwidth?: number
  /** Preload weights ahead of their layer (default true). */
  readonly preload?: boolean
  /** Keep weights resident across inferences when the budget allows (default true). */
  readonly pin?: boolean
  /** Static memory plan (default true; false: dynamic first-fit, for the ablation benchmark). */
  readonly staticPlan?: boolean
  /** Verify every blob's checksum at open ('all', default) or only the structure ('header'). */
  readonly verify?: 'header' | 'all'
  /**
   * How weight reads walk the disk: requests of at most `chunkBytes` (a multiple of 4096, 4 KiB..64 MiB),
   * `queueDepth` (1..64) of them in flight. Default 256 KiB x 8; `npm run bench:io` compares geometries
   * on a device.
   */
  readonly readGeometry?: ReadGeometry
}

export interface ReadGeometry {
  readonly chunkBytes: number
  readonly queueDepth: number
}

export interface CheckedBudgetOptions extends CheckedCommon {
  readonly memoryBudget?: number | 'auto'
  readonly onAutoBudget?: (change: AutoBudgetChange) => void
  readonly ioBandwidth?: number
  readonly readGeometry?: ReadGeometry
  readonly direct: boolean
  readonly preload: boolean
  readonly pin: boolean
  readonly staticPlan: boolean
  readonly verify: 'header' | 'all'
}

export function checkBudgetOptions(options: PackageOpenOptions, path: string): CheckedBudgetOptions {
  const o = checkOptionNames(options, 'budget', path)
  if (o.memoryBudget !== undefined && o.memoryBudget !== 'auto') checkBudget(o.memoryBudget as number)
  if (o.onAutoBudget !== undefined && typeof o.onAutoBudget !== 'function') throw new ArgumentError(`onAutoBudget: expected a function, got ${typeof o.onAutoBudget}`)
  const ioBandwidth = checkPositive(o, 'ioBandwidth', 'bytes per second')
  if (o.readGeometry !== undefined) checkReadGeometry(o.readGeometry as ReadGeometry, 'readGeometry')
  const g = o.readGeometry as ReadGeometry | undefined
  return {
    ...checkCommon(o),
    ...(o.memoryBudget === undefined ? {} : { memoryBudget: o.memoryBudget as number | 'auto' }),
    ...(o.onAutoBudget === undefined ? {} : { onAutoBudget: o.onAutoBudget as (change: AutoBudgetChange) => void }),
    ...(ioBandwidth === undefined ? {} : { ioBandwidth }),
    ...(g === undefined ? {} : { readGeometry: { chunkBytes: g.chunkBytes, queueDepth: g.queueDepth } }),
    direct: checkBoolean(o, 'direct', true),
    preload: checkBoolean(o, 'preload', true),
    pin: checkBoolean(o, 'pin', true),
    staticPlan: checkBoolean(o, 'staticPlan', true),
    verify: checkChoice(o, 'verify', ['all', 'header'] as const, 'all'),
  }
}

/** Throws ArgumentError unless g is a read geometry the native reader takes. */
function checkReadGeometry(g: ReadGeometry, what: string): void {
  const c = g?.chunkBytes
  const d = g?.queueDepth
  if (!Number.isSafeInteger(c) || c < 4096 || c > 64 * 2 ** 20 || c % 4096 !== 0) {
    throw new ArgumentError(`${what}.chunkBytes: expected a multiple of 4096 from 4096 to 64 MiB, got ${String(c)}`)
  }
  if (!Number.isInteger(d) || d < 1 || d > 64) throw new ArgumentError(`${what}.queueDepth: expected an integer 1..64, got ${String(d)}`)
}

/** Throws ArgumentError unless `bytes` is a number of bytes a budget can be ('auto' is checked by the caller). */
export function checkBudget(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new ArgumentError(`memoryBudget: expected a positive integer number of bytes or 'auto', got ${String(bytes)}`)
}

/** How an engine follows the machine (tests point `memoryRoot` at a fake /proc and cgroupfs). */
export interface FollowOptions {
  readonly memoryRoot?: string
  readonly autoConstants?: AutoBudgetConstants
}
