// SPDX-License-Identifier: Apache-2.0
// bench:zoo (issue 36): flexpipe against onnxruntime-node on every model of the zoo, as a user would
// try them. Not in CI.
//
//   /usr/bin/python3 scripts/bench/export_zoo.py      # once: .cache/zoo-models/ (random seeded weights)
//   npm run bench:zoo [-- --models resnet18,mnasnet1_0 --shapes native --threads 1,2 --processes 3]
//   npm run bench:zoo -- --latency-shapes native     # conformance on every shape, latency on the native one
//
// For every (model, input shape):
//   1. conformance: one run in a process of each engine; every output within 1e-4 * max|ort| + 1e-5;
//   2. latency: each engine in its own fresh process (zoo-child.ts), the two alternating which goes
//      first, `--processes` (3) processes per engine, thread count and case; a process opens the model,
//      runs `--warmup` (3) untimed and `--runs` (10) timed inferences back to back (capped at
//      `--budget` s of timed runs, at no fewer than 3) and reports their median. The case's figure is
//      the median over processes; ratio = flexpipe / onnxruntime;
//   3. cold start (native shape at batch 1, `--threads-cold` 2): fresh `node` process to its first
//      result, the engine's module imported in the process, page cache warm (the model was just read);
//      `--drop-caches` also measures it after `echo 3 > /proc/sys/vm/drop_caches` (root);
//   4. per-operator profile (flexpipe's inferProfiled, median of 5) of the five worst ratios.
// onnxruntime-node runs with its defaults for its own process (intra-op threads = the case's, spinning
// on: no other engine shares the process), graphOptimizationLevel 'all', sequential.
// Prints the table and geometric means; writes bench/results/zoo.json (--out to change).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, median, numberOption, option, repoRoot, resultsDir, round, versions } from '../models/cases.js'
import type { ChildJob, ChildResult } from './zoo-child.js'
import { skippedModels, zooCases, zooExportCommand, type ZooCase } from './zoo-cases.js'
import { compareOutputs, geometricMean, latencyRow, zooTable, type ColdRow, type Conformance, type EngineRuns, type LatencyRow } from './zoo-report.js'

const LIMIT = 1.15
const childJs = join(fileURLToPath(new URL('.', import.meta.url)), 'zoo-child.js')
const wallNow = (): number => performance.timeOrigin + performance.now()

const threadList = (option('threads', 'FLEXPIPE_ZOO_THREADS') ?? '1,2').split(',').map(Number)
if (threadList.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--threads: expected e.g. 1,2')
const processes = Math.round(numberOption('processes', 'FLEXPIPE_ZOO_PROCESSES', 3))
const runs = Math.round(numberOption('runs', 'FLEXPIPE_ZOO_RUNS', 10))
const warmup = Math.round(numberOption('warmup', 'FLEXPIPE_ZOO_WARMUP', 3))
const budgetS = numberOption('budget', 'FLEXPIPE_ZOO_BUDGET_S', 20)
const coldThreads = Math.round(numberOption('threads-cold', 'FLEXPIPE_ZOO_COLD_THREADS', 2))
const timeoutS = numberOption('timeout', 'FLEXPIPE_ZOO_TIMEOUT_S', 600)
const dropCaches = process.argv.includes('--drop-caches')
const skip = new Set((option('skip', 'FLEXPIPE_ZOO_SKIP') ?? '').split(',').filter(Boolean)) // conformance,latency,cold,profile
const out = option('out', 'FLEXPIPE_ZOO_OUT') ?? join(resultsDir, 'zoo.json')
/** `--latency-shapes native`: time only the native shape at batch 1 (conformance still covers every shape). */
const latencyShapes = option('latency-shapes', 'FLEXPIPE_ZOO_LATENCY_SHAPES') ?? 'all'
if (latencyShapes !== 'all' && latencyShapes !== 'native') throw new Error(`--latency-shapes: expected native or all, got ${latencyShapes}`)

type Engine = ChildJob['engine']
type Spawned = ChildResult & { readonly spawnedAt: number }

function child(job: ChildJob): Spawned {
  const spawnedAt = wallNow()
  const r = spawnSync(process.execPath, [childJs, JSON.stringify(job)], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 16 << 20 })
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? ''
  try {
    return { ...(JSON.parse(last) as ChildResult), spawnedAt }
  } catch {
    const why = r.error?.message ?? (r.signal !== null ? `killed by ${r.signal}` : `exit ${r.status}`)
    return { ok: false, error: `${why}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' / ')}`, spawnedAt }
  }
}

/** A file of raw float32s (copied: readFileSync's Buffer may sit at any offset of a shared pool). */
function readFloats(file: string): Float32Array {
  const bytes = readFileSync(file)
  const out = new Float32Array(bytes.length / 4)
  new Uint8Array(out.buffer).set(bytes)
  return out
}

function conformance(c: ZooCase): Conformance {
  const dir = mkdtempSync(join(tmpdir(), 'flexpipe-zoo-'))
  try {
    const job = { job: 'outputs', model: c.path, inputs: c.inputs, threads: 2, outDir: dir } as const
    const ort = child({ ...job, engine: 'ort' })
    if (!ort.ok) return { ok: false, outputs: [], error: `onnxruntime: ${ort.error}` }
    const fp = child({ ...job, engine: 'flexpipe' })
    if (!fp.ok) return { ok: false, outputs: [], error: `flexpipe: ${fp.error}` }
    const load = (r: ChildResult) => r.outputs!.map((o) => ({ ...o, data: readFloats(o.file) }))
    return compareOutputs(load(fp), load(ort))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `processes` rounds of one process per engine, the engines alternating which goes first. */
function alternating(run: (engine: Engine) => void): void {
  for (let p = 0; p < processes; p++) for (const engine of p % 2 === 0 ? (['flexpipe', 'ort'] as const) : (['ort', 'flexpipe'] as const)) run(engine)
}

function latency(c: ZooCase, threads: number): { fp: EngineRuns; ort: EngineRuns } {
  const into: Record<Engine, EngineRuns> = { flexpipe: { processMedians: [], errors: [] }, ort: { processMedians: [], errors: [] } }
  alternating((engine) => {
    const r = child({ job: 'time', engine, model: c.path, inputs: c.inputs, threads, runs, warmup, budgetMs: budgetS * 1000 })
    if (r.ok) into[engine].processMedians.push(median(r.samplesMs!))
    else into[engine].errors.push(r.error!)
  })
  return { fp: into.flexpipe, ort: into.ort }
}

function dropPageCache(): void {
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3\n')
  } catch (err) {
    throw new Error(`--drop-caches: cannot write /proc/sys/vm/drop_caches (${(err as Error).message}); run as root or leave the flag out`)
  }
}

function coldStart(c: ZooCase, drop: boolean): ColdRow | undefined {
  const done: Record<Engine, Spawned[]> = { flexpipe: [], ort: [] }
  alternating((engine) => {
    if (drop) dropPageCache()
    const r = child({ job: 'cold', engine, model: c.path, inputs: c.inputs, threads: coldThreads })
    if (r.ok) done[engine].push(r)
  })
  const { flexpipe: fp, ort } = done
  if (fp.length === 0 || ort.length === 0) return undefined
  const m = (rs: Spawned[], f: (r: Spawned) => number) => round(median(rs.map(f)), 1)
  const total = (r: Spawned) => r.firstResultAt! - r.spawnedAt
  const opened = (r: Spawned) => r.openedAt! - r.spawnedAt
  const firstRun = (r: Spawned) => r.firstRunMs!
  const flexpipeMs = m(fp, total)
  const ortMs = m(ort, total)
  return {
    key: c.key, flexpipeMs, ortMs, ratio: round(flexpipeMs / ortMs),
    flexpipeOpenMs: m(fp, opened), flexpipeFirstRunMs: m(fp, firstRun), ortOpenMs: m(ort, opened), ortFirstRunMs: m(ort, firstRun),
  }
}

const log = (s: string): void => console.log(s)
const cases = zooCases()
if (cases.length === 0) throw new Error(`no zoo models in .cache/zoo-models: run ${zooExportCommand}`)
const started = new Date().toISOString()
const machineStart = machine()
log(`bench:zoo: ${cases.length} cases (${new Set(cases.map((c) => c.model)).size} models); threads ${threadList.join(',')}; ${processes} processes per engine; ${runs} runs after ${warmup} warm-up (budget ${budgetS} s); cold start at ${coldThreads} threads${dropCaches ? ', warm and dropped page cache' : ', warm page cache'}`)
log(`machine: ${String(machineStart.cpu)}, ${String(machineStart.cores)} cores; flexpipe isa ${String((versions().flexpipeNative as { isa: string }).isa)}; onnxruntime-node ${String(versions().onnxruntimeNode)}`)

const conform = new Map<string, Conformance>()
const lat: LatencyRow[] = []
const latErrors: Array<{ key: string; threads: number; errors: string[] }> = []
const cold: ColdRow[] = []
const coldDropped: ColdRow[] = []
const profiles: Array<{ key: string; threads: number; ratio: number; opTypes: ChildResult['opTypes'] }> = []

function save(): void {
  const json = {
    benchmark: 'zoo',
    date: started,
    finished: new Date().toISOString(),
    machine: { ...machineStart, loadavgEnd: machine().loadavg },
    ...versions(),
    settings: { threads: threadList, latencyShapes, processes, runs, warmup, budgetS, coldThreads, dropCaches, limit: LIMIT, ortSessionOptions: { interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all', intraOpNumThreads: 'threads of the case' }, engines: 'each engine in its own fresh process, alternating which goes first', exportCommand: zooExportCommand },
    skippedModels: skippedModels(),
    cases: cases.map((c) => ({ key: c.key, model: c.model, family: c.family, path: relative(repoRoot, c.path), inputs: c.inputs.map((i) => ({ name: i.name, dims: i.dims })), conformance: conform.get(c.key) })),
    latency: lat,
    latencyErrors: latErrors,
    geometricMean: Object.fromEntries(threadList.map((t) => [t, round(geometricMean(lat.filter((l) => l.threads === t).map((l) => l.ratio)))])),
    pairGeometricMean: Object.fromEntries(threadList.map((t) => [t, round(geometricMean(lat.filter((l) => l.threads === t).map((l) => l.pairRatio)))])),
    cold,
    coldDropped,
    coldGeometricMean: cold.length > 0 ? round(geometricMean(cold.map((r) => r.ratio))) : undefined,
    coldDroppedGeometricMean: coldDropped.length > 0 ? round(geometricMean(coldDropped.map((r) => r.ratio))) : undefined,
    profiles,
  }
  writeFileSync(out, `${JSON.stringify(json, null, 1)}\n`)
}

for (const c of cases) {
  if (!skip.has('conformance')) {
    const r = conformance(c)
    conform.set(c.key, r)
    log(`${c.key}: conformance ${r.error ?? (r.ok ? 'ok' : 'FAILS')} ${r.outputs.map((o) => `${o.name} ${o.maxAbsDiff.toExponential(1)}/${o.maxAbsOrt.toExponential(1)}`).join(', ')}`)
  }
  if (!skip.has('latency') && (latencyShapes === 'all' || c.native)) {
    for (const threads of threadList) {
      const { fp, ort } = latency(c, threads)
      const row = latencyRow(c.key, threads, fp, ort)
      if (row !== undefined) lat.push(row)
      if (fp.errors.length + ort.errors.length > 0) latErrors.push({ key: c.key, threads, errors: [...fp.errors.map((e) => `flexpipe: ${e}`), ...ort.errors.map((e) => `onnxruntime: ${e}`)] })
      log(`${c.key} @${threads}t: ${row === undefined ? 'no result' : `flexpipe ${row.flexpipeMs} ms, onnxruntime ${row.ortMs} ms, ratio ${row.ratio} (per process ${row.pairRatios.join(', ')})`}${fp.errors.length + ort.errors.length > 0 ? ` errors: ${[...fp.errors, ...ort.errors][0]}` : ''}`)
    }
  }
  if (c.native && !skip.has('cold')) {
    const warm = coldStart(c, false)
    if (warm !== undefined) cold.push(warm)
    const dropped = dropCaches ? coldStart(c, true) : undefined
    if (dropped !== undefined) coldDropped.push(dropped)
    log(`${c.key} cold start: ${warm === undefined ? 'no result' : `flexpipe ${warm.flexpipeMs} ms (open ${warm.flexpipeOpenMs}, first run ${warm.flexpipeFirstRunMs}), onnxruntime ${warm.ortMs} ms (open ${warm.ortOpenMs}, first run ${warm.ortFirstRunMs}), ratio ${warm.ratio}`}${dropped === undefined ? '' : `; dropped cache: ${dropped.flexpipeMs} vs ${dropped.ortMs} ms`}`)
  }
  save()
}

if (!skip.has('profile')) {
  const worst = [...lat].sort((a, b) => b.ratio - a.ratio).filter((r, i, all) => all.findIndex((x) => x.key === r.key) === i).slice(0, 5)
  for (const w of worst) {
    const c = cases.find((x) => x.key === w.key)!
    const r = child({ job: 'profile', engine: 'flexpipe', model: c.path, inputs: c.inputs, threads: w.threads, runs: 5 })
    profiles.push({ key: w.key, threads: w.threads, ratio: w.ratio, opTypes: r.opTypes })
  }
  save()
}

log('')
for (const line of zooTable(cases.map((c) => c.key), threadList, lat, cold, conform, LIMIT)) log(line)
if (coldDropped.length > 0) log(`cold start, dropped page cache: geometric mean ${geometricMean(coldDropped.map((r) => r.ratio)).toFixed(3)}x over ${coldDropped.length} models`)
const failing = cases.filter((c) => conform.get(c.key)?.ok === false)
if (failing.length > 0) log(`not conforming: ${failing.map((c) => `${c.key} (${conform.get(c.key)!.error ?? 'outside tolerance'})`).join('; ')}`)
for (const p of profiles) log(`profile ${p.key} @${p.threads}t (ratio ${p.ratio}): ${(p.opTypes ?? []).slice(0, 6).map((o) => `${o.opType} ${o.ms.toFixed(2)} ms (${o.count})`).join(', ')}`)
const skipped = Object.entries(skippedModels())
if (skipped.length > 0) log(`not exported: ${skipped.map(([k, v]) => `${k} (${v})`).join('; ')}`)
log(`wrote ${relative(repoRoot, out)}`)
