// SPDX-License-Identifier: Apache-2.0
// `npm run bench:budget-ranges`: memory-budgeted packages prepared for a dim range (issue 37) —
// ResNet-50 for batch 1..8 and BERT-base for seq_len 8..128 — at every weight resident and at a third
// of that budget. Per case, one child process per budget (alternating over rounds): the engine opens
// the package, runs every value of the range (warm-up, then timed calls), and reports the median
// latency per value, the arena, the loads per inference and its peak memory: VmHWM minus the
// process's RSS with the addon loaded, the inputs made and nothing opened (bench/memory's method: each
// call's outputs dropped and collected). MB means 10^6 bytes. Writes bench/results/dynamic-budget.json.
//
//   --rounds N   child processes per (case, budget), alternating (default 2)
//   --runs N     timed calls per value (default 5), after one warm-up call
//   --threads N  (default 2)
//   --random N   instead: N calls at seeded random values of one case (--case, default bert) at a third of
//                its budget, RSS sampled every 100 calls: bench/results/dynamic-budget-random.json and .svg
//   --case NAME  resnet50-8, resnet50-4 or bert (with --random)
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { seeded } from '../seeded.js'
import { medianOf, memory } from './shared.js'

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..')
const modelDir = join(repoRoot, '.cache', 'bench-models')
const packageDir = join(repoRoot, '.cache', 'bench-budget-ranges')

interface Case {
  readonly key: string
  readonly name: string
  readonly model: string
  readonly dims: Readonly<Record<string, number | readonly [number, number]>>
  /** The ranged dim and the values timed. */
  readonly dim: string
  readonly values: readonly number[]
}

const cases: readonly Case[] = [
  { key: 'resnet50-8', name: 'ResNet-50 (batch 1..8, 224x224)', model: join(modelDir, 'resnet50.onnx'), dims: { batch: [1, 8] }, dim: 'batch', values: [1, 2, 3, 4, 5, 6, 7, 8] },
  { key: 'resnet50-4', name: 'ResNet-50 (batch 1..4, 224x224)', model: join(modelDir, 'resnet50.onnx'), dims: { batch: [1, 4] }, dim: 'batch', values: [1, 2, 3, 4] },
  { key: 'bert', name: 'BERT-base (seq_len 8..128, batch 1)', model: join(modelDir, 'bert_base.onnx'), dims: { batch: 1, seq_len: [8, 128] }, dim: 'seq_len', values: Array.from({ length: 16 }, (_, i) => 8 * (i + 1)) },
]

interface ChildJob {
  readonly package: string
  readonly budget: number | null
  readonly threads: number
  readonly dim: string
  readonly values: readonly number[]
  readonly runs: number
  /** Instead of the values in turn: this many calls at values drawn from them (seeded), memory every 100. */
  readonly random?: number
}

interface RandomResult {
  readonly points: Array<{ calls: number; rss: number; hwm: number }>
  readonly base: number
  readonly memoryBudget: number
  readonly arenaBytes: number
  readonly callMs: number
  readonly seconds: number
  readonly shapePrograms: number
}

interface ChildResult {
  readonly ms: Record<string, number>
  /** The first call at each value, after its program was made. */
  readonly firstMs: Record<string, number>
  /** Making the program of a value not seen before (executionPlan(): the template evaluated, the native program added). */
  readonly newShapeMs: Record<string, number>
  readonly templated: boolean
  readonly peakBytes: number
  readonly arenaBytes: number
  readonly memoryBudget: number
  readonly loadBytesPerInference: number
  readonly loadsPerInference: number
  readonly slicedLayers: number
  readonly shapePrograms: number
}

async function child(job: ChildJob): Promise<void> {
  const fp = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)) as typeof import('../../lib/index.js')
  const { binding } = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'native', 'binding.js')).href)) as typeof import('../../lib/native/binding.js')
  binding()
  const { PackageReader } = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'package', 'reader.js')).href)) as typeof import('../../lib/package/reader.js')
  const reader = await PackageReader.open(job.package, { verify: 'header' })
  const inputs = (reader.manifest.graph as { inputs: Array<{ name: string; dtype: string; dims: Array<number | string> }> }).inputs
  await reader.close()
  const feedsAt = (v: number): Record<string, import('../../lib/index.js').Tensor> => {
    const feeds: Record<string, import('../../lib/index.js').Tensor> = {}
    for (const i of inputs) {
      const dims = (i.dims ?? []).map((d) => (typeof d === 'number' ? d : d === job.dim ? v : 1))
      const n = dims.reduce((a, b) => a * b, 1)
      feeds[i.name] =
        i.dtype === 'int64'
          ? { dtype: 'int64', dims, data: i.name === 'attention_mask' ? new BigInt64Array(n).fill(1n) : BigInt64Array.from({ length: n }, (_, k) => BigInt(1 + ((k * 7919) % 20000))) }
          : { dtype: 'float32', dims, data: Float32Array.from({ length: n }, (_, k) => Math.sin(k * 0.001)) }
    }
    return feeds
  }
  // As bench/memory measures: the inputs exist before the baseline, and each call's outputs are dropped
  // and collected (gc, a turn of the event loop, gc: V8 frees a dead ArrayBuffer only after a later task).
  const feeds = new Map(job.values.map((v) => [v, feedsAt(v)]))
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run the child with node --expose-gc')
  const collect = async (): Promise<void> => {
    gc()
    await new Promise((r) => setImmediate(r))
    gc()
  }
  await collect()
  const base = memory().rss
  const engine = await fp.openPackage(job.package, { threads: job.threads, ...(job.budget === null ? {} : { memoryBudget: job.budget }) })
  const ms: Record<string, number> = {}
  const firstMs: Record<string, number> = {}
  const newShapeMs: Record<string, number> = {}
  const timed = async (v: number): Promise<number> => {
    const t0 = performance.now()
    await engine.infer(feeds.get(v)!)
    const t = performance.now() - t0
    await collect()
    return t
  }
  if (job.random !== undefined) {
    // seeded draws over the values: every value comes up in the first few hundred calls
    const next = seeded(0x2f6b1d)
    const points: RandomResult['points'] = []
    const times: number[] = []
    const t0 = performance.now()
    for (let i = 1; i <= job.random; i++) {
      times.push(await timed(job.values[Math.floor(next() * job.values.length)]!))
      if (i % 100 === 0) {
        const m = memory()
        points.push({ calls: i, rss: m.rss - base, hwm: m.hwm - base })
      }
    }
    const s = engine.stats()
    const r: RandomResult = { points, base, memoryBudget: s.memoryBudget, arenaBytes: s.arenaBytes, callMs: medianOf(times), seconds: (performance.now() - t0) / 1e3, shapePrograms: s.dims?.shapePrograms ?? 0 }
    await engine.close()
    process.stdout.write(`RESULT ${JSON.stringify(r)}\n`)
    return
  }
  for (const v of job.values) {
    const t0 = performance.now()
    await engine.executionPlan(feeds.get(v)!)
    newShapeMs[String(v)] = performance.now() - t0
    firstMs[String(v)] = await timed(v)
    const times: number[] = []
    for (let r = 0; r < job.runs; r++) times.push(await timed(v))
    ms[String(v)] = medianOf(times)
  }
  const s = engine.stats()
  const result: ChildResult = {
    ms,
    firstMs,
    newShapeMs,
    templated: s.dims?.templated ?? false,
    peakBytes: memory().hwm - base,
    arenaBytes: s.arenaBytes,
    memoryBudget: s.memoryBudget,
    loadBytesPerInference: s.loadBytesPerInference,
    loadsPerInference: s.loadsPerInference,
    slicedLayers: s.slicedLayers,
    shapePrograms: s.dims?.shapePrograms ?? 0,
  }
  await engine.close()
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`)
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { child: { type: 'string' }, rounds: { type: 'string' }, runs: { type: 'string' }, threads: { type: 'string' }, random: { type: 'string' }, case: { type: 'string' } } })
  if (values.child !== undefined) return child(JSON.parse(values.child) as ChildJob)
  const rounds = Number(values.rounds ?? 2)
  const runs = Number(values.runs ?? 5)
  const threads = Number(values.threads ?? 2)
  const { prepare } = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'prepare', 'prepare.js')).href)) as typeof import('../../lib/prepare/prepare.js')
  mkdirSync(packageDir, { recursive: true })
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown'
  if (values.random !== undefined) return randomRun(cases.find((c) => c.key === (values.case ?? 'bert'))!, Number(values.random), threads, cpu, prepare)
  console.log(`machine: ${cpu}, ${threads} threads, loads by io_uring (O_DIRECT); ${rounds} child processes per (case, budget), ${runs} timed calls per value`)
  const out: Array<Record<string, unknown>> = []
  for (const c of cases) {
    if (!existsSync(c.model)) {
      console.log(`${c.name}: ${c.model} missing (python3 scripts/bench/export_models.py); skipped`)
      continue
    }
    const pkg = join(packageDir, `${c.dim}-${c.values[c.values.length - 1]}-${c.model.split('/').pop()!.replace('.onnx', '')}.fpk`)
    const report = await prepare(c.model, pkg, { dims: c.dims, threads })
    const third = Math.round(report.unlimitedBudget / 3)
    const budgets: Array<{ label: string; budget: number | null }> = [
      { label: 'every weight resident', budget: null },
      { label: 'a third of that', budget: Math.max(third, report.minimumBudget) },
    ]
    const results = new Map<string, ChildResult[]>(budgets.map((b) => [b.label, []]))
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? budgets : budgets.slice().reverse()) {
        const job: ChildJob = { package: pkg, budget: b.budget, threads, dim: c.dim, values: c.values, runs }
        const p = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 24 })
        const line = p.stdout.split('\n').find((l) => l.startsWith('RESULT '))
        if (p.status !== 0 || line === undefined) throw new Error(`${c.name} at ${b.label}: the child failed:\n${p.stderr}`)
        results.get(b.label)!.push(JSON.parse(line.slice(7)) as ChildResult)
      }
    }
    console.log(`\n${c.name}: prepared ${(report.minimumBudget / 1e6).toFixed(1)} MB minimum .. ${(report.unlimitedBudget / 1e6).toFixed(1)} MB every weight resident`)
    const rows = budgets.map((b) => {
      const rs = results.get(b.label)!
      const ms = Object.fromEntries(c.values.map((v) => [v, medianOf(rs.map((x) => x.ms[String(v)]!))]))
      const firstMs = Object.fromEntries(c.values.map((v) => [v, medianOf(rs.map((x) => x.firstMs[String(v)]!))]))
      const newShapeMs = medianOf(rs.flatMap((x) => c.values.slice(0, -1).map((v) => x.newShapeMs[String(v)]!)))
      const peak = Math.max(...rs.map((x) => x.peakBytes))
      const r0 = rs[0]!
      return { label: b.label, budget: r0.memoryBudget, peakBytes: peak, arenaBytes: r0.arenaBytes, loadBytesPerInference: r0.loadBytesPerInference, loadsPerInference: r0.loadsPerInference, slicedLayers: r0.slicedLayers, templated: r0.templated, newShapeMs, ms, firstMs, withinBudget: peak <= r0.memoryBudget }
    })
    console.log(`| ${c.dim} | ${rows.map((r) => `${r.label}: ms (first call)`).join(' | ')} | third / resident |`)
    console.log(`|---|${rows.map(() => '---').join('|')}|---|`)
    for (const v of c.values) console.log(`| ${v} | ${rows.map((r) => `${r.ms[v]!.toFixed(1)} (${r.firstMs[v]!.toFixed(1)})`).join(' | ')} | ${(rows[1]!.ms[v]! / rows[0]!.ms[v]!).toFixed(2)} |`)
    for (const r of rows) {
      console.log(
        `${r.label}: budget ${(r.budget / 1e6).toFixed(1)} MB, peak ${(r.peakBytes / 1e6).toFixed(1)} MB (VmHWM - RSS with the addon loaded; max over processes) ${r.withinBudget ? '<=' : '>'} budget; ` +
          `arena ${(r.arenaBytes / 1e6).toFixed(1)} MB; ${r.loadsPerInference} loads, ${(r.loadBytesPerInference / 1e6).toFixed(1)} MB read per inference; ${r.slicedLayers} sliced layers; ` +
          `a new ${c.dim}'s program ${r.newShapeMs.toFixed(2)} ms (median, ${r.templated ? 'from the template' : 'exact builds'})`,
      )
    }
    out.push({ case: c.name, dims: c.dims, minimumBudget: report.minimumBudget, unlimitedBudget: report.unlimitedBudget, rows })
  }
  const file = join(repoRoot, 'bench', 'results', 'dynamic-budget.json')
  writeFileSync(file, `${JSON.stringify({ machine: { cpu, threads }, io: 'io_uring, O_DIRECT', rounds, runs, date: new Date().toISOString(), cases: out }, null, 2)}\n`)
  console.log(`\nwrote ${file}`)
}

/** One child at a third of the case's budget (or its minimum), `calls` calls at random values of its range. */
async function randomRun(c: Case, calls: number, threads: number, cpu: string, prepare: typeof import('../../lib/prepare/prepare.js').prepare): Promise<void> {
  const pkg = join(packageDir, `${c.dim}-${c.values[c.values.length - 1]}-${c.model.split('/').pop()!.replace('.onnx', '')}.fpk`)
  const report = await prepare(c.model, pkg, { dims: c.dims, threads })
  const budget = Math.max(Math.round(report.unlimitedBudget / 3), report.minimumBudget)
  console.log(`machine: ${cpu}, ${threads} threads, loads by io_uring (O_DIRECT); ${c.name} at ${(budget / 1e6).toFixed(1)} MB, ${calls} calls at random values of its range`)
  const lo = Number(c.values[0])
  const hi = Number(c.values[c.values.length - 1])
  const all = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i)
  const job: ChildJob = { package: pkg, budget, threads, dim: c.dim, values: all, runs: 0, random: calls }
  const p = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 26 })
  const line = p.stdout.split('\n').find((l) => l.startsWith('RESULT '))
  if (p.status !== 0 || line === undefined) throw new Error(`the child failed:\n${p.stderr}`)
  const r = JSON.parse(line.slice(7)) as RandomResult
  const covered = r.points.find((x) => x.calls >= 1000) ?? r.points[0]!
  const after = r.points.filter((x) => x.calls >= covered.calls)
  const drift = Math.max(...after.map((x) => x.rss)) - Math.min(...after.map((x) => x.rss))
  const peak = Math.max(...r.points.map((x) => x.hwm))
  console.log(
    `RSS above the idle process: ${(covered.rss / 1e6).toFixed(1)} MB at call ${covered.calls}, ${(r.points[r.points.length - 1]!.rss / 1e6).toFixed(1)} MB at call ${calls}; ` +
      `range after call ${covered.calls}: ${(drift / 1e6).toFixed(2)} MB; peak ${(peak / 1e6).toFixed(1)} MB against the budget ${(r.memoryBudget / 1e6).toFixed(1)} MB (${peak <= r.memoryBudget ? 'within' : 'OVER'}); ` +
      `arena ${(r.arenaBytes / 1e6).toFixed(1)} MB; median call ${r.callMs.toFixed(1)} ms; ${r.seconds.toFixed(0)} s; ${r.shapePrograms} shape programs kept`,
  )
  const { lineChart } = (await import(pathToFileURL(join(repoRoot, 'dist', 'bench', 'memory', 'svg-plot.js')).href)) as typeof import('../memory/svg-plot.js')
  const svg = lineChart({
    title: `${c.name} at ${(r.memoryBudget / 1e6).toFixed(1)} MB: ${calls} calls at random ${c.dim}`,
    xLabel: 'calls',
    yLabel: 'MB above the idle process',
    yRange: [0, Math.ceil((r.memoryBudget * 1.1) / 1e6)],
    series: [
      { label: 'RSS', points: r.points.map((x) => [x.calls, x.rss / 1e6] as const), color: '#1f77b4', marker: 'circle', line: true },
      { label: 'peak (VmHWM)', points: r.points.map((x) => [x.calls, x.hwm / 1e6] as const), color: '#d62728', marker: 'cross', line: true, dashed: true },
      { label: 'memory budget', points: [[0, r.memoryBudget / 1e6], [calls, r.memoryBudget / 1e6]], color: '#2ca02c', marker: 'square', line: true, dashed: true },
    ],
  })
  writeFileSync(join(repoRoot, 'bench', 'results', 'dynamic-budget-random.svg'), svg)
  const file = join(repoRoot, 'bench', 'results', 'dynamic-budget-random.json')
  writeFileSync(file, `${JSON.stringify({ machine: { cpu, threads }, io: 'io_uring, O_DIRECT', case: c.name, dims: c.dims, calls, date: new Date().toISOString(), coveredAt: covered.calls, driftBytes: drift, peakBytes: peak, ...r }, null, 2)}\n`)
  console.log(`wrote ${file} and dynamic-budget-random.svg`)
}

await main()
