// SPDX-License-Identifier: Apache-2.0
// Latency against measured peak memory per model (FlexNN's evaluation, issue 4):
//
//   npm run bench:memory
//   npm run bench:memory -- --models resnet152,vgg19 --runs 5 --points 8 --throttle both
//   FLEXPIPE_BENCH_MODELS=squeezenet node dist/bench/memory/memory.bench.js
//
// Options (argument or environment): --models / FLEXPIPE_BENCH_MODELS (resnet152, vgg19, vit_b_16,
// gpt2, mobilenetv2, squeezenet; all by default), --threads / FLEXPIPE_BENCH_THREADS (2), --runs /
// FLEXPIPE_BENCH_RUNS (timed runs per configuration, 5), --warmup / FLEXPIPE_BENCH_WARMUP (1),
// --points / FLEXPIPE_BENCH_POINTS (budgets on the flexpipe curve, 8), --throttle /
// FLEXPIPE_BENCH_THROTTLE (on | off | both: ioBandwidth 257e6 B/s, the paper's Raspberry Pi),
// --floor / FLEXPIPE_BENCH_FLOOR_MB (budget the curve package is prepared for; per model by default),
// --timeout / FLEXPIPE_BENCH_TIMEOUT_S (per child, 1800), --paired-rounds / FLEXPIPE_BENCH_PAIRED_ROUNDS
// (rounds of the one-process latency ratio at 100 MB, 6; 0 skips it).
//
// Every configuration runs in its own child (measure-child.ts), so each peak is that configuration's
// VmHWM. Prints a table, the acceptance checks and one JSON line per configuration, and writes
// bench/results/memory.json and bench/results/memory-<model>.svg. Engine errors fail the tap test;
// the numbers never do.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import tap from 'tap'
import { ensureModels, exportCommand, machine, manifestEntry, numberOption, option, resultsDir, versions } from '../models/cases.js'
import { curveBudgets, label, pointConfigurations, type ChildFailure, type ChildRequest, type ChildResult, type Configuration, type PairedResult } from './configs.js'
import { fakeApi, prepareApi } from './lead-api.js'
import { MB, memoryCases, repoRoot, type MemoryCase } from './memory-cases.js'
import { checks, plot, table, throttleLabel, type Pending, type ReadBandwidth } from './report.js'
import { measureReadBandwidth } from '../../lib/prepare/measure-budget-device.js'
import { measureChild, measurePaired, preparePackages, type PreparedPackage } from './run-child.js'

const THROTTLE = 257e6 // bytes/s: the Raspberry Pi 4B's average read speed in the FlexNN paper

const threads = Math.round(numberOption('threads', 'FLEXPIPE_BENCH_THREADS', 2))
const runs = Math.round(numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 5))
const warmup = Math.round(Number(option('warmup', 'FLEXPIPE_BENCH_WARMUP') ?? 1))
const points = Math.round(numberOption('points', 'FLEXPIPE_BENCH_POINTS', 8))
// Rounds of the paired latency measurement at 100 MB (PairedRequest; 0 skips it).
const pairedRounds = Math.round(numberOption('paired-rounds', 'FLEXPIPE_BENCH_PAIRED_ROUNDS', 6, true))
const timeoutS = numberOption('timeout', 'FLEXPIPE_BENCH_TIMEOUT_S', 1800)
const floorOption = option('floor', 'FLEXPIPE_BENCH_FLOOR_MB')
const throttleMode = option('throttle', 'FLEXPIPE_BENCH_THROTTLE') ?? 'both'
if (!['on', 'off', 'both'].includes(throttleMode)) throw new Error(`--throttle / FLEXPIPE_BENCH_THROTTLE: expected on, off or both, got '${throttleMode}'`)
const throttles: Array<number | undefined> = throttleMode === 'on' ? [THROTTLE] : throttleMode === 'off' ? [undefined] : [undefined, THROTTLE]

/** The median of three cold reads of (up to 128 MiB of) the package's blobs, as prepare's profile reads them. */
async function readBandwidth(path: string): Promise<{ bytesPerSecond: number; direct: boolean }> {
  const xs = [await measureReadBandwidth(path), await measureReadBandwidth(path), await measureReadBandwidth(path)]
  xs.sort((a, b) => a.bytesPerSecond - b.bytesPerSecond)
  return xs[1]!
}

function selectedModels(): MemoryCase[] {
  const list = option('models', 'FLEXPIPE_BENCH_MODELS')
  if (list === undefined) return [...memoryCases]
  const names = list.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = names.filter((n) => !memoryCases.some((c) => c.name === n))
  if (unknown.length > 0) throw new Error(`unknown model(s) ${unknown.join(', ')}; known: ${memoryCases.map((c) => c.name).join(', ')}`)
  return memoryCases.filter((c) => names.includes(c.name))
}

interface Collected {
  readonly results: ChildResult[]
  /** The 100 MB latency ratio measured in one process (checks quote it beside the children's ratio). */
  readonly paired: PairedResult[]
  readonly failures: ChildFailure[]
  readonly pending: Pending[]
  readonly packages: Record<string, Record<string, Omit<PreparedPackage, 'kind'>>>
  /** Cold (O_DIRECT) read bandwidth of the curve package, bytes/s, measured before and after the model's runs. */
  readonly bandwidth: Record<string, ReadBandwidth>
}

type Measure = (c: MemoryCase, config: Configuration, file: string, budgetBytes: number | undefined, throttle: number | undefined) => ChildResult | undefined

function makeMeasure(out: Collected, t: Pick<typeof tap, 'pass' | 'fail' | 'comment'>): Measure {
  return (c, config, file, budgetBytes, throttle) => {
    const request: ChildRequest = { model: c.name, file, config, budgetBytes, threads, throttle, warmup, runs }
    const r = measureChild(request, timeoutS)
    const what = `${c.name} ${label(config)} throttle ${throttleLabel(throttle)}`
    if (!r.ok) {
      // An ablation that does not plan within the curve's mid budget (a one-point curve's mid budget is
      // the package minimum, found with everything the ablations switch off) is a result, not an error.
      const needs = /MemoryBudgetError: .* below the minimum of (\d+) bytes/.exec(r.error)
      if (config.series.startsWith('w/o') && needs !== null && budgetBytes !== undefined) {
        out.pending.push({ model: c.name, what: `${label(config)} throttle ${throttleLabel(throttle)}`, reason: `does not plan within ${(budgetBytes / MB).toFixed(1)} MB (needs ${(Number(needs[1]) / MB).toFixed(1)} MB)` })
        t.comment(`${what}: not run, needs ${(Number(needs[1]) / MB).toFixed(1)} MB, more than ${(budgetBytes / MB).toFixed(1)} MB`)
        return undefined
      }
      out.failures.push(r)
      t.fail(`${what}: ${r.error}`)
      return undefined
    }
    out.results.push(r)
    // STYLE §8: one JSON line per case.
    console.log(JSON.stringify({ model: c.name, config: label(config), throttle: throttleLabel(throttle), budget_mb: budgetBytes === undefined ? null : budgetBytes / MB, peak_mb: r.peakBytes / MB, p50_ms: r.median, p10_ms: r.p10, p90_ms: r.p90, runs: r.timesMs.length, threads }))
    t.pass(`${what}: peak ${(r.peakBytes / MB).toFixed(1)} MB, median ${r.median.toFixed(1)} ms`)
    return r
  }
}

/** The curve (unlimited first: it is the ratio reference and the top of the curve), then baselines and ablations. */
function packageRuns(c: MemoryCase, pkgs: Map<PreparedPackage['kind'], PreparedPackage>, measure: Measure): void {
  const curve = pkgs.get('curve')!
  let budgets: number[] | undefined
  for (const throttle of throttles) {
    const top = measure(c, { series: 'flexpipe', pkg: 'curve', budget: 'unlimited' }, curve.path, undefined, throttle)
    if (budgets === undefined) {
      const arena = top?.stats.arenaBytes
      const high = typeof arena === 'number' && arena > 0 ? arena : (top?.peakBytes ?? 4 * curve.report.minimumBudget)
      budgets = curveBudgets(curve.report.minimumBudget, high, points, c.extraBudgets)
    }
    for (const b of budgets) measure(c, { series: 'flexpipe', pkg: 'curve', budget: b }, curve.path, b, throttle)
    const mid = budgets[Math.floor(budgets.length / 2)]!
    for (const config of pointConfigurations(mid)) {
      const p = pkgs.get(config.pkg as PreparedPackage['kind'])!
      const budget = config.budget === 'unlimited' ? undefined : config.budget === 'min' ? p.report.minimumBudget : config.budget
      measure(c, config, p.path, budget, throttle)
    }
  }
}

async function runModel(c: MemoryCase, out: Collected, measure: Measure, log: (s: string) => void): Promise<void> {
  // open(model.onnx): today's engine, all weights in memory, page-cache reads (no package, no throttle).
  measure(c, { series: 'flexpipe (onnx)', pkg: 'onnx', budget: 'unlimited' }, c.path, undefined, undefined)
  if (prepareApi === undefined) {
    out.pending.push({ model: c.name, what: 'curve, NCNN-Default, NCNN-Direct, On-Demand, ablations', reason: 'lib/index.ts does not export prepare() yet (lead API)' })
    return
  }
  let pkgs: Map<PreparedPackage['kind'], PreparedPackage>
  try {
    pkgs = preparePackages(c, floorOption === undefined ? c.floor : Number(floorOption) * MB, threads, timeoutS, log)
  } catch (err) {
    out.pending.push({ model: c.name, what: 'all package configurations', reason: `prepare failed: ${err instanceof Error ? err.message : String(err)}` })
    return
  }
  out.packages[c.name] = Object.fromEntries([...pkgs].map(([k, { kind: _, ...p }]) => [k, { ...p, path: relative(repoRoot, p.path) }]))
  const curve = pkgs.get('curve')!.path
  const before = await readBandwidth(curve)
  log(`${c.name}: cold read bandwidth ${(before.bytesPerSecond / 1e9).toFixed(2)} GB/s (O_DIRECT ${before.direct})`)
  packageRuns(c, pkgs, measure)
  if (pairedRounds > 0 && c.extraBudgets.includes(100 * MB)) {
    for (const throttle of throttles) {
      const p = measurePaired({ paired: { model: c.name, file: curve, budgetBytes: 100 * MB, threads, throttle, runs, rounds: pairedRounds } }, timeoutS)
      if (p.ok) {
        out.paired.push(p)
        log(`${c.name}: paired at 100 MB, throttle ${throttleLabel(throttle)}: ${p.rounds.map((r) => `${r.budgetedMs.toFixed(1)}/${r.unconstrainedMs.toFixed(1)}`).join(', ')} ms`)
      } else {
        log(`${c.name}: paired at 100 MB failed: ${p.error}`)
      }
    }
  }
  const after = await readBandwidth(curve)
  log(`${c.name}: cold read bandwidth after the runs ${(after.bytesPerSecond / 1e9).toFixed(2)} GB/s`)
  out.bandwidth[c.name] = { before: before.bytesPerSecond, after: after.bytesPerSecond, direct: before.direct && after.direct }
}

tap.setTimeout(0)
tap.test('memory: latency against measured peak memory', { timeout: 0 }, async (t) => {
  const log = (s: string) => console.log(s)
  const cases = selectedModels()
  const started = new Date().toISOString()
  const machineStart = machine()
  if (fakeApi) log('FLEXPIPE_BENCH_FAKE_API=1: packages are copies of the ONNX files, budgets are ignored; this tests the harness, not the engine')
  log(`models: ${cases.map((c) => c.name).join(', ')}; threads ${threads}; runs ${runs}, warm-up ${warmup}; points ${points}; throttle ${throttleMode}; MB = 1e6 bytes`)
  const unavailable = ensureModels(cases.map((c) => ({ ...c, exported: true, feeds: async () => ({}) })), log)
  const out: Collected = { results: [], paired: [], failures: [], pending: [], packages: {}, bandwidth: {} }
  const measure = makeMeasure(out, t)
  for (const c of cases) {
    const why = unavailable.get(c.name)
    if (why !== undefined) {
      t.fail(`${c.name}: ${why}`)
      out.pending.push({ model: c.name, what: 'everything', reason: why })
      continue
    }
    log(`${c.name}:`)
    await runModel(c, out, measure, log)
  }
  const lines = [...table(out.results, out.failures, out.pending), '', ...checks(out.results, cases.map((c) => c.name), out.bandwidth, out.paired)]
  for (const line of lines) log(line)

  mkdirSync(resultsDir, { recursive: true })
  for (const c of cases.filter((c) => out.results.some((r) => r.model === c.name))) {
    const svg = join(resultsDir, `memory-${c.name}.svg`)
    writeFileSync(svg, plot(c.name, c.describe, out.results))
    log(`wrote ${relative(repoRoot, svg)}`)
  }
  const json = {
    benchmark: 'memory',
    date: started,
    finished: new Date().toISOString(),
    machine: { ...machineStart, loadavgEnd: machine().loadavg },
    ...versions(),
    settings: {
      threads,
      runs,
      warmup,
      points,
      mb: '1 MB = 1e6 bytes',
      peak: 'VmHWM at the end of the child minus its VmRSS after loading the library + addon and making the inputs',
      paired: `at 100 MB: one child opens the budgeted and the unconstrained engine of the curve package in turn (one at a time), ${runs} timed runs after one warm-up each, ${pairedRounds} rounds in alternating order; ratio = median over rounds of budgeted median / unconstrained median`,
      io: { packages: 'cold: open(fpk, { direct: true }) reads with O_DIRECT (no page cache)', onnx: 'open(model.onnx): the file is read through the page cache (warm after the first run)' },
      throttle: { mode: throttleMode, bandwidthBytesPerSecond: THROTTLE },
      prepareApi: prepareApi !== undefined,
      fakeApi: fakeApi ? 'FLEXPIPE_BENCH_FAKE_API=1: packages are ONNX copies and budgets are ignored; numbers test the plumbing only' : false,
    },
    exportCommand,
    models: Object.fromEntries(cases.map((c) => {
      const m = manifestEntry(c.name)
      return [c.name, { path: relative(repoRoot, c.path), describe: c.describe, sha256: m?.sha256, bytes: m?.bytes }]
    })),
    packages: out.packages,
    readBandwidth: out.bandwidth,
    results: out.results,
    paired: out.paired,
    failures: out.failures,
    pending: out.pending,
    checks: lines.slice(lines.indexOf('') + 1),
  }
  const file = join(resultsDir, 'memory.json')
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`)
  log(`wrote ${relative(repoRoot, file)}`)
})
