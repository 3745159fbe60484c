// SPDX-License-Identifier: Apache-2.0
// Where the time goes in the VM's slow stretches (bench/models/README.md): many back-to-back profiled
// runs of one model in one process, then the fastest and the slowest quarter of them compared op by op.
//
//   npm run build:ts && node dist/bench/models/slow-stretch.js [--models mobilenetv2] [--threads 1] [--runs 120]
//
// Prints the run series (ms, in order, so stretches show), the mean wall and op time of each quarter,
// and the ops whose time grew most with their slow/fast ratio. Nothing is written.
import { open } from '../../lib/index.js'
import { allCases, numberOption, option, selectedCases, selectedThreads } from './cases.js'

interface Sample {
  ms: number
  ops: { node: string; native: string; ms: number }[]
}

const runs = Math.max(8, Math.round(numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 120)))
const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length

const cases = option('models', 'FLEXPIPE_BENCH_MODELS') === undefined ? allCases.filter((c) => c.name === 'mobilenetv2') : selectedCases()
for (const c of cases) {
  for (const threads of selectedThreads()) {
    const feeds = await c.feeds()
    const engine = await open(c.path, { threads })
    for (let i = 0; i < 3; i++) await engine.infer(feeds)
    const samples: Sample[] = []
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      const r = await engine.inferProfiled(feeds)
      samples.push({ ms: performance.now() - t0, ops: r.ops.map((o) => ({ node: o.node, native: o.native, ms: o.ms })) })
    }
    await engine.close()
    console.log(`${c.name}, ${threads} thread(s), ${runs} profiled runs back to back (ms, in order):`)
    for (let i = 0; i < runs; i += 20) console.log('  ' + samples.slice(i, i + 20).map((s) => s.ms.toFixed(1)).join(' '))
    const sorted = [...samples].sort((a, b) => a.ms - b.ms)
    const q = Math.max(1, Math.floor(runs / 4))
    const fast = sorted.slice(0, q)
    const slow = sorted.slice(-q)
    const opSum = (s: Sample): number => s.ops.reduce((a, o) => a + o.ms, 0)
    console.log(`  fastest quarter: ${mean(fast.map((s) => s.ms)).toFixed(2)} ms (ops ${mean(fast.map(opSum)).toFixed(2)}); ` +
      `slowest quarter: ${mean(slow.map((s) => s.ms)).toFixed(2)} ms (ops ${mean(slow.map(opSum)).toFixed(2)})`)
    const rows = samples[0]!.ops.map((o, i) => ({
      node: o.node,
      native: o.native,
      fast: mean(fast.map((s) => s.ops[i]!.ms)),
      slow: mean(slow.map((s) => s.ops[i]!.ms)),
    }))
    rows.sort((a, b) => b.slow - b.fast - (a.slow - a.fast))
    console.log('  ops that grew most (fast ms -> slow ms, ratio):')
    for (const r of rows.slice(0, 12)) {
      console.log(`    ${r.fast.toFixed(3)} -> ${r.slow.toFixed(3)}  ${(r.slow / r.fast).toFixed(2)}x  ${r.native}  ${r.node}`)
    }
  }
}
