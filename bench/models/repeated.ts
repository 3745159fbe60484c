// SPDX-License-Identifier: Apache-2.0
// Whole-model latency over several processes: runs models.bench.js `--processes` times (default 5),
// each a fresh Node process with both engines, and reports per case the median over processes of
// flexpipe's median, onnxruntime's median and their same-run ratio, with the range of the ratios.
//
//   npm run bench:models:repeated [-- --processes 5 --models mobilenetv2 --threads 1,2 ...]
//
// Why: on the 2-vCPU VM these figures come from, a whole process can stay in a slow state for its
// entire run (bench/models/README.md, "after a pause"), so one process's ratio swings between 1.0x
// and 1.5x for the same build. The median over processes of per-process ratios is the figure the
// README quotes; every process's result is kept. Other options pass through to models.bench.js.
// Writes bench/results/models-repeated.json (and leaves the last process's bench/results/models.json).
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median, numberOption, resultsDir } from './cases.js'

interface CaseResult {
  model: string
  threads: number
  flexpipe?: { median_ms: number }
  ort?: { median_ms: number }
  ratio?: number
}

const processes = Math.max(1, Math.round(numberOption('processes', 'FLEXPIPE_BENCH_PROCESSES', 5)))
const child = join(fileURLToPath(new URL('.', import.meta.url)), 'models.bench.js')
const passThrough: string[] = []
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!
  if (a === '--processes') i++
  else if (!a.startsWith('--processes=')) passThrough.push(a)
}

const runs: Array<{ process: number; machine: unknown; cases: CaseResult[] }> = []
for (let p = 0; p < processes; p++) {
  console.log(`# process ${p + 1} of ${processes}: node ${child} ${passThrough.join(' ')}`)
  const r = spawnSync(process.execPath, [child, ...passThrough], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`models.bench.js exited with ${r.status}: ${r.stdout.slice(-2000)}`)
  const result = JSON.parse(readFileSync(join(resultsDir, 'models.json'), 'utf8')) as { machine: unknown; cases: CaseResult[] }
  runs.push({ process: p + 1, machine: result.machine, cases: result.cases })
  for (const c of result.cases) console.log(`#   ${c.model}@${c.threads}: ratio ${c.ratio ?? '-'}`)
}

const keys = [...new Set(runs.flatMap((r) => r.cases.map((c) => `${c.model}@${c.threads}`)))]
const rows = keys.map((key) => {
  const cs = runs.map((r) => r.cases.find((c) => `${c.model}@${c.threads}` === key)).filter((c): c is CaseResult => c?.ratio !== undefined)
  const ratios = cs.map((c) => c.ratio!)
  const [model, threads] = key.split('@') as [string, string]
  return {
    model,
    threads: Number(threads),
    processes: cs.length,
    flexpipe_ms: +median(cs.map((c) => c.flexpipe!.median_ms)).toFixed(2),
    ort_ms: +median(cs.map((c) => c.ort!.median_ms)).toFixed(2),
    ratio: +median(ratios).toFixed(3),
    ratio_min: Math.min(...ratios),
    ratio_max: Math.max(...ratios),
    ratios,
  }
})

console.log(`\nWhole-model latency over ${processes} processes (median over processes of each process's medians and same-run ratio):\n`)
console.log('| model | threads | flexpipe ms | ort ms | ratio | ratio range |')
console.log('|---|--:|--:|--:|--:|---|')
for (const r of rows) console.log(`| ${r.model} | ${r.threads} | ${r.flexpipe_ms} | ${r.ort_ms} | ${r.ratio.toFixed(2)}x${r.ratio > 1.15 ? ' !' : ''} | ${r.ratio_min.toFixed(2)}-${r.ratio_max.toFixed(2)} |`)
const out = join(resultsDir, 'models-repeated.json')
writeFileSync(out, JSON.stringify({ benchmark: 'models-repeated', date: new Date().toISOString(), processes, args: passThrough, machine: runs[0]?.machine, rows, runs }, null, 1) + '\n')
console.log(`\nwrote ${out}`)
