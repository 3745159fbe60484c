// SPDX-License-Identifier: Apache-2.0
// GEMM GFLOP/s, flexpipe's packed-panel driver vs OpenBLAS cblas_sgemm, 1 and 2 threads (issue 3):
//
//   npm run bench:kernels
//   npm run bench:kernels -- --shapes 1024x1024x1024 --threads 1 --runs 40
//
// Shapes are M x K x N (C[M, N] = A[M, K] · B[K, N]): 1024³, and BERT-base's projections at sequence
// 128 (128x768x768 attention, 128x768x3072 FFN up, 128x3072x768 FFN down). Options (argument or
// environment): --shapes / FLEXPIPE_BENCH_SHAPES, --threads / FLEXPIPE_BENCH_THREADS (1,2), --runs /
// FLEXPIPE_BENCH_RUNS (30 timed calls per library, in rounds of 5 alternating with the other
// library), --warmup / FLEXPIPE_BENCH_WARMUP (5).
// bench/kernels/gemm_bench.cc does the timing (built here on demand, linking OpenBLAS: Debian
// libopenblas-dev); ours excludes packing B (an offline weight transform) and includes packing A.
// Prints a table and one JSON line per case, writes bench/results/kernels-gemm.json. Timing never
// fails the run; a build failure or results that disagree with OpenBLAS do.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildBench } from './build-bench.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const TARGET = 0.9
t.setTimeout(0) // a full run takes minutes

function option(name: string, env: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? process.env[env] ?? fallback
}

/** CPU model name plus family/model numbers (a VM may only say "AMD EPYC"), from /proc/cpuinfo. */
function cpuModel(): string {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8')
    const field = (name: string): string | undefined => new RegExp(`^${name}\\s*:\\s*(.+)$`, 'm').exec(info)?.[1]?.trim()
    const name = field('model name')
    const family = field('cpu family')
    const model = field('model')
    if (name) return family && model ? `${name} (family ${family} model ${model})` : name
  } catch {
    /* not Linux */
  }
  return cpus()[0]?.model ?? 'unknown'
}

interface Row {
  impl: 'flexpipe' | 'openblas'
  m: number
  k: number
  n: number
  threads: number
  runs: number
  p50_ms: number
  min_ms: number
  gflops: number
  max_rel_diff: number
  paired_speedup: number
}

t.test('gemm GFLOP/s: flexpipe vs OpenBLAS', async (t) => {
  const shapes = option('shapes', 'FLEXPIPE_BENCH_SHAPES', '1024x1024x1024,128x768x768,128x768x3072,128x3072x768')
  const threads = option('threads', 'FLEXPIPE_BENCH_THREADS', '1,2')
  const runs = option('runs', 'FLEXPIPE_BENCH_RUNS', '30')
  const warmup = option('warmup', 'FLEXPIPE_BENCH_WARMUP', '5')
  const exe = await buildBench(repoRoot, 'gemm_bench', ['-lopenblas'])
  const r = spawnSync(exe, ['--shapes', shapes, '--threads', threads, '--runs', runs, '--warmup', warmup], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  })
  t.equal(r.status, 0, `gemm_bench exits cleanly${r.stderr ? `: ${r.stderr.trim()}` : ''}`)
  const lines = (r.stdout ?? '').trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  const info = lines.find((l) => l.info === true) ?? {}
  const rows = lines.filter((l) => l.impl !== undefined) as unknown as Row[]
  const machine = { cpu: cpuModel(), cores: cpus().length, availableParallelism: availableParallelism(), loadavg: loadavg(), platform: `${process.platform}-${process.arch}` }
  const table: Array<Record<string, unknown>> = []
  for (const ours of rows.filter((x) => x.impl === 'flexpipe')) {
    const blas = rows.find((x) => x.impl === 'openblas' && x.m === ours.m && x.k === ours.k && x.n === ours.n && x.threads === ours.threads)
    if (!blas) continue
    const ratio = ours.gflops / blas.gflops
    t.ok(ours.max_rel_diff < 1e-4, `${ours.m}x${ours.k}x${ours.n} agrees with OpenBLAS (max rel diff ${ours.max_rel_diff})`)
    table.push({
      shape: `${ours.m}x${ours.k}x${ours.n}`,
      threads: ours.threads,
      flexpipe_gflops: ours.gflops,
      openblas_gflops: blas.gflops,
      ratio: Math.round(ratio * 1000) / 1000,
      paired_ratio: ours.paired_speedup,
      flexpipe_p50_ms: ours.p50_ms,
      openblas_p50_ms: blas.p50_ms,
      within_target: ratio >= TARGET,
    })
  }
  const pad = (s: unknown, w: number): string => String(s).padStart(w)
  console.log(`# ${machine.cpu}, ${machine.cores} cores; flexpipe isa ${String(info.isa)} tile ${String(info.mr)}x${String(info.nr)} (mc ${String(info.mc)}, kc ${String(info.kc)}, nc ${String(info.nc)}); OpenBLAS core ${String(info.openblas)}`)
  console.log(`# shape M x K x N   threads   flexpipe GFLOP/s   OpenBLAS GFLOP/s   ratio   paired   (target >= ${TARGET})`)
  for (const row of table) {
    console.log(`# ${String(row.shape).padEnd(16)} ${pad(row.threads, 7)} ${pad(row.flexpipe_gflops, 18)} ${pad(row.openblas_gflops, 18)} ${pad(row.ratio, 7)} ${pad(row.paired_ratio, 8)}${row.within_target ? '' : '  below target'}`)
  }
  for (const row of table) console.log(JSON.stringify({ kernel: 'gemm_f32', isa: info.isa, cpu: machine.cpu, ...row }))
  const out = join(repoRoot, 'bench', 'results', 'kernels-gemm.json')
  mkdirSync(dirname(out), { recursive: true })
  const doc = { machine, isa: info, convention: 'M x K x N: C[M, N] = A[M, K] · B[K, N], row-major; flexpipe excludes packing B (offline), includes packing A', runs: Number(runs), warmup: Number(warmup), statistic: 'GFLOP/s of the median call time; ratio = ours / OpenBLAS; paired_ratio = median over rounds of 5 calls of (OpenBLAS time / ours), the two alternating round by round', target: TARGET, results: table, raw: rows }
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`)
  console.log(`# wrote ${relative(repoRoot, out)}`)
})
