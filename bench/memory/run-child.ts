// SPDX-License-Identifier: Apache-2.0
// The parent's side of measure-child.js: spawn it with one JSON request and read its one JSON line;
// and the packages it prepares (reused from .cache/bench-packages/ while newer than the model and
// prepared by the same build of the library).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { prepareOptions, type ChildFailure, type ChildRequest, type ChildResult, type PackageKind, type PairedRequest, type PairedResult, type PrepareOptions, type PrepareReport, type PrepareRequest } from './configs.js'
import { buildId } from '../build-id.js'
import { MB, packageDir, type MemoryCase } from './memory-cases.js'

const childJs = join(dirname(fileURLToPath(import.meta.url)), 'measure-child.js')

/** Runs the child; its stdout's last JSON line is the answer, anything else is an error with stderr's tail. */
function spawnChild(request: ChildRequest | PrepareRequest | PairedRequest, timeoutS: number): unknown {
  const r = spawnSync(process.execPath, ['--expose-gc', childJs, JSON.stringify(request)], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 64 << 20 })
  const line = (r.stdout ?? '').split('\n').filter((l) => l.startsWith('{')).pop()
  if (line !== undefined) return JSON.parse(line) as unknown
  const why = r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : `exit code ${r.status}`
  const tail = (r.stderr ?? '').trim().split('\n').slice(-4).join(' / ')
  throw new Error(`measure-child: ${why}${tail ? `: ${tail}` : ''}`)
}

export function measureChild(request: ChildRequest, timeoutS: number): ChildResult | ChildFailure {
  try {
    return spawnChild(request, timeoutS) as ChildResult | ChildFailure
  } catch (err) {
    return { ok: false, model: request.model, config: request.config, throttle: request.throttle, error: err instanceof Error ? err.message : String(err) }
  }
}

/** The paired latency measurement (PairedRequest) in a child; an Error's message on failure. */
export function measurePaired(request: PairedRequest, timeoutS: number): PairedResult | { ok: false; error: string } {
  try {
    return spawnChild(request, timeoutS) as PairedResult
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) }
  }
}

export interface PreparedPackage {
  readonly kind: Exclude<PackageKind, 'onnx'>
  readonly path: string
  readonly options: PrepareOptions
  readonly report: PrepareReport
  readonly reused: boolean
}

function packagePath(model: string, kind: string, options: PrepareOptions): string {
  const budget = options.budget === undefined ? '' : `-${Math.round(options.budget / MB)}MB`
  return join(packageDir, `${model}-${kind}${budget}.fpk`)
}

/**
 * Prepares one package in a child, or reuses it (same options, newer than the model, prepared by this
 * build: buildId); its report sits beside it.
 */
function prepareOne(c: MemoryCase, kind: PreparedPackage['kind'], options: PrepareOptions, timeoutS: number): PreparedPackage {
  const path = packagePath(c.name, kind, options)
  const side = `${path}.json`
  const build = buildId()
  if (existsSync(path) && existsSync(side) && statSync(path).mtimeMs > statSync(c.path).mtimeMs) {
    const saved = JSON.parse(readFileSync(side, 'utf8')) as { options: PrepareOptions; report: PrepareReport; build?: string }
    if (JSON.stringify(saved.options) === JSON.stringify(options) && saved.build === build) {
      return { kind, path, options, report: saved.report, reused: true }
    }
  }
  mkdirSync(packageDir, { recursive: true })
  const report = spawnChild({ prepare: { model: c.name, file: c.path, out: path, options } }, timeoutS) as PrepareReport
  writeFileSync(side, `${JSON.stringify({ options, report, build }, null, 2)}\n`)
  return { kind, path, options, report, reused: false }
}

/**
 * The four packages of a model. The curve package is prepared for the floor budget; when prepare()
 * rejects it as infeasible the floor is doubled (at most three times).
 */
export function preparePackages(c: MemoryCase, floor: number, threads: number, timeoutS: number, log: (s: string) => void): Map<PreparedPackage['kind'], PreparedPackage> {
  const out = new Map<PreparedPackage['kind'], PreparedPackage>()
  let budget = floor
  for (let attempt = 0; ; attempt++) {
    try {
      out.set('curve', prepareOne(c, 'curve', prepareOptions('curve', budget, threads), timeoutS))
      break
    } catch (err) {
      if (attempt === 3) throw err
      log(`  ${c.name}: prepare at ${(budget / MB).toFixed(0)} MB failed (${err instanceof Error ? err.message : String(err)}); trying ${((2 * budget) / MB).toFixed(0)} MB`)
      budget *= 2
    }
  }
  for (const kind of ['default', 'direct', 'ondemand'] as const) out.set(kind, prepareOne(c, kind, prepareOptions(kind, budget, threads), timeoutS))
  for (const p of out.values()) {
    const r = p.report
    log(`  package ${p.kind}${p.reused ? ' (reused)' : ''}: ${JSON.stringify(p.options)} -> minimum ${(r.minimumBudget / MB).toFixed(1)} MB, ${r.slicedLayers}/${r.layers} layers sliced, ${(r.packageBytes / MB).toFixed(0)} MB, ${r.ms.toFixed(0)} ms`)
  }
  return out
}
