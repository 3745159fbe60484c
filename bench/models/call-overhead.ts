// SPDX-License-Identifier: Apache-2.0
// What one infer() call costs beyond its ops: flexpipe and onnxruntime-node on a one-op model (ONNX's
// Relu backend test, 60 floats), so the time is the call path itself -- argument checks, the queue,
// flexpipe's hand-off to its compute lane and back to the event loop, the promise.
//
//   npm run build:ts && node dist/bench/models/call-overhead.js [--threads 1,2] [--runs 2000] [--rounds 5]
//
// Per thread count, `rounds` rounds; each round times `runs` calls of each engine, alternating them call by
// call, and keeps the medians. Prints the median over rounds of those medians (µs) and their ratio;
// writes bench/results/call-overhead.json.
import * as ort from 'onnxruntime-node'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { open } from '../../lib/index.js'
import { machine, median, numberOption, resultsDir, round, selectedThreads, versions } from './cases.js'

const model = '/usr/share/libonnx-testdata/data/node/test_relu/model.onnx'
if (!existsSync(model)) {
  console.error(`${model} is missing: apt-get install libonnx-testdata`)
  process.exit(1)
}
const runs = Math.max(10, Math.round(numberOption('runs', 'FLEXPIPE_BENCH_RUNS', 2000)))
const rounds = Math.max(1, Math.round(numberOption('rounds', 'FLEXPIPE_BENCH_ROUNDS', 5)))
const x = Float32Array.from({ length: 60 }, (_, i) => i / 7 - 4)

const rows: Array<Record<string, unknown>> = []
for (const threads of selectedThreads()) {
  const engine = await open(model, { threads })
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential' })
  const feeds = { x: { dtype: 'float32' as const, dims: [3, 4, 5], data: x } }
  const oFeeds = { x: new ort.Tensor('float32', x, [3, 4, 5]) }
  for (let i = 0; i < 100; i++) {
    await engine.infer(feeds)
    await session.run(oFeeds)
  }
  const fp: number[] = []
  const rt: number[] = []
  for (let r = 0; r < rounds; r++) {
    const a: number[] = []
    const b: number[] = []
    for (let i = 0; i < runs; i++) {
      let t0 = performance.now()
      await engine.infer(feeds)
      a.push(performance.now() - t0)
      t0 = performance.now()
      await session.run(oFeeds)
      b.push(performance.now() - t0)
    }
    fp.push(median(a) * 1000)
    rt.push(median(b) * 1000)
  }
  rows.push({
    threads,
    flexpipe_us: round(median(fp), 1),
    ort_us: round(median(rt), 1),
    ratio: round(median(fp) / median(rt), 2),
    flexpipe_rounds_us: fp.map((v) => round(v, 1)),
    ort_rounds_us: rt.map((v) => round(v, 1)),
  })
  await session.release()
  await engine.close()
}

console.table(rows.map(({ threads, flexpipe_us, ort_us, ratio }) => ({ threads, 'flexpipe µs': flexpipe_us, 'onnxruntime µs': ort_us, ratio })))
const out = {
  benchmark: 'call-overhead',
  date: new Date().toISOString(),
  machine: machine(),
  ...versions(),
  settings: { model, runs, rounds, timing: 'wall time of one awaited call, engines alternating call by call; median per round, then median over rounds' },
  rows,
}
mkdirSync(resultsDir, { recursive: true })
writeFileSync(join(resultsDir, 'call-overhead.json'), `${JSON.stringify(out, null, 2)}\n`)
console.log(`wrote ${join(resultsDir, 'call-overhead.json')}`)
