// SPDX-License-Identifier: Apache-2.0
// `npm run bench:budget-ranges`: memory-budgeted packages prepared for a dim range (issue 37) —
// ResNet-50 for batch 1..8 and BERT-base for seq_len 8..128 — at every weight resident and at a third
// of that budget. Per case, one child process per budget (alternating over rounds): the engine opens
// the package, runs every value of the range (warm-up, then timed calls), and reports the median
// latency per value, the arena, the loads per inference and its peak memory: VmHWM minus the
// process's RSS with the addon loaded and nothing opened. Writes bench/results/dynamic-budget.json.
//
//   --rounds N   child processes per (case, budget), alternating (default 2)
//   --runs N     timed calls per value (default 5), after one warm-up call
//   --threads N  (default 2)
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const repoRoot = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..')
const modelDir = join(repoRoot, '.cache', 'bench-models')
const packageDir = join(repoRoot, '.cache', 'bench-budget-ranges')

interface Case {
  readonly name: string
  readonly model: string
  readonly dims: Readonly<Record<string, number | readonly [number, number]>>
  /** The ranged dim and the values timed. */
  readonly dim: string
  readonly values: readonly number[]
}

const cases: readonly Case[] = [
  { name: 'ResNet-50 (batch 1..8, 224x224)', model: join(modelDir, 'resnet50.onnx'), dims: { batch: [1, 8] }, dim: 'batch', values: [1, 2, 3, 4, 5, 6, 7, 8] },
  { name: 'BERT-base (seq_len 8..128, batch 1)', model: join(modelDir, 'bert_base.onnx'), dims: { batch: 1, seq_len: [8, 128] }, dim: 'seq_len', values: Array.from({ length: 16 }, (_, i) => 8 * (i + 1)) },
]

interface ChildJob {
  readonly package: string
  readonly budget: number | null
  readonly threads: number
  readonly dim: string
  readonly values: readonly number[]
  readonly runs: number
}

interface ChildResult {
  readonly ms: Record<string, number>
  /** The first call at each value (the shape's program is built then: shape inference and program, no planning). */
  readonly firstMs: Record<string, number>
  readonly peakBytes: number
  readonly arenaBytes: number
  readonly memoryBudget: number
  readonly loadBytesPerInference: number
  readonly loadsPerInference: number
  readonly slicedLayers: number
  readonly shapePrograms: number
}

function status(): { rss: number; hwm: number } {
  const s = readFileSync('/proc/self/status', 'utf8')
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)![1]) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

const median = (xs: readonly number[]): number => {
  const s = xs.slice().sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

async function child(job: ChildJob): Promise<void> {
  const fp = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)) as typeof import('../../lib/index.js')
  const { binding } = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'native', 'binding.js')).href)) as typeof import('../../lib/native/binding.js')
  binding()
  const base = status().rss
  const engine = await fp.openPackage(job.package, { threads: job.threads, ...(job.budget === null ? {} : { memoryBudget: job.budget }) })
  const feedsAt = (v: number): Record<string, import('../../lib/index.js').Tensor> => {
    const feeds: Record<string, import('../../lib/index.js').Tensor> = {}
    for (const i of engine.inputs) {
      const dims = (i.dims ?? []).map((d) => (typeof d === 'number' ? d : d === job.dim ? v : 1))
      const n = dims.reduce((a, b) => a * b, 1)
      feeds[i.name] =
        i.dtype === 'int64'
          ? { dtype: 'int64', dims, data: i.name === 'attention_mask' ? new BigInt64Array(n).fill(1n) : BigInt64Array.from({ length: n }, (_, k) => BigInt(1 + ((k * 7919) % 20000))) }
          : { dtype: 'float32', dims, data: Float32Array.from({ length: n }, (_, k) => Math.sin(k * 0.001)) }
    }
    return feeds
  }
  const ms: Record<string, number> = {}
  const firstMs: Record<string, number> = {}
  for (const v of job.values) {
    const feeds = feedsAt(v)
    const t0 = performance.now()
    await engine.infer(feeds)
    firstMs[String(v)] = performance.now() - t0
    const times: number[] = []
    for (let r = 0; r < job.runs; r++) {
      const t0 = performance.now()
      await engine.infer(feeds)
      times.push(performance.now() - t0)
    }
    ms[String(v)] = median(times)
  }
  const s = engine.stats()
  const result: ChildResult = {
    ms,
    firstMs,
    peakBytes: status().hwm - base,
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
  const { values } = parseArgs({ options: { child: { type: 'string' }, rounds: { type: 'string' }, runs: { type: 'string' }, threads: { type: 'string' } } })
  if (values.child !== undefined) return child(JSON.parse(values.child) as ChildJob)
  const rounds = Number(values.rounds ?? 2)
  const runs = Number(values.runs ?? 5)
  const threads = Number(values.threads ?? 2)
  const { prepare } = (await import(pathToFileURL(join(repoRoot, 'dist', 'lib', 'prepare', 'prepare.js')).href)) as typeof import('../../lib/prepare/prepare.js')
  mkdirSync(packageDir, { recursive: true })
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown'
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
        const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 24 })
        const line = p.stdout.split('\n').find((l) => l.startsWith('RESULT '))
        if (p.status !== 0 || line === undefined) throw new Error(`${c.name} at ${b.label}: the child failed:\n${p.stderr}`)
        results.get(b.label)!.push(JSON.parse(line.slice(7)) as ChildResult)
      }
    }
    console.log(`\n${c.name}: prepared ${(report.minimumBudget / 2 ** 20).toFixed(1)} MB minimum .. ${(report.unlimitedBudget / 2 ** 20).toFixed(1)} MB every weight resident`)
    const rows = budgets.map((b) => {
      const rs = results.get(b.label)!
      const ms = Object.fromEntries(c.values.map((v) => [v, median(rs.map((x) => x.ms[String(v)]!))]))
      const firstMs = Object.fromEntries(c.values.map((v) => [v, median(rs.map((x) => x.firstMs[String(v)]!))]))
      const peak = Math.max(...rs.map((x) => x.peakBytes))
      const r0 = rs[0]!
      return { label: b.label, budget: r0.memoryBudget, peakBytes: peak, arenaBytes: r0.arenaBytes, loadBytesPerInference: r0.loadBytesPerInference, loadsPerInference: r0.loadsPerInference, slicedLayers: r0.slicedLayers, ms, firstMs, withinBudget: peak <= r0.memoryBudget }
    })
    console.log(`| ${c.dim} | ${rows.map((r) => `${r.label}: ms (first call)`).join(' | ')} | third / resident |`)
    console.log(`|---|${rows.map(() => '---').join('|')}|---|`)
    for (const v of c.values) console.log(`| ${v} | ${rows.map((r) => `${r.ms[v]!.toFixed(1)} (${r.firstMs[v]!.toFixed(1)})`).join(' | ')} | ${(rows[1]!.ms[v]! / rows[0]!.ms[v]!).toFixed(2)} |`)
    for (const r of rows) {
      console.log(
        `${r.label}: budget ${(r.budget / 2 ** 20).toFixed(1)} MB, peak ${(r.peakBytes / 2 ** 20).toFixed(1)} MB (VmHWM - RSS with the addon loaded; max over processes) ${r.withinBudget ? '<=' : '>'} budget; ` +
          `arena ${(r.arenaBytes / 2 ** 20).toFixed(1)} MB; ${r.loadsPerInference} loads, ${(r.loadBytesPerInference / 2 ** 20).toFixed(1)} MB read per inference; ${r.slicedLayers} sliced layers`,
      )
    }
    out.push({ case: c.name, dims: c.dims, minimumBudget: report.minimumBudget, unlimitedBudget: report.unlimitedBudget, rows })
  }
  const file = join(repoRoot, 'bench', 'results', 'dynamic-budget.json')
  writeFileSync(file, `${JSON.stringify({ machine: { cpu, threads }, io: 'io_uring, O_DIRECT', rounds, runs, date: new Date().toISOString(), cases: out }, null, 2)}\n`)
  console.log(`\nwrote ${file}`)
}

await main()
