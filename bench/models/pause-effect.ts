// SPDX-License-Identifier: Apache-2.0
// How much slower a run is when it follows a pause, flexpipe and onnxruntime-node alike (the
// effect bench/models/README.md describes):
//
//   npm run build:ts && node dist/bench/models/pause-effect.js [--models mobilenetv2,squeezenet] [--threads 1,2] [--blocks 8]
//
// Per engine, in turn: `blocks` blocks of 5 back-to-back timed runs, each block after a 100 ms pause
// and one untimed run ("after pause"), then 5 x `blocks` runs with no pause at all ("back to back").
// Prints the medians; nothing is written.
import * as ort from 'onnxruntime-node'
import { setTimeout as sleep } from 'node:timers/promises'
import { open } from '../../lib/index.js'
import { allCases, median, numberOption, option, ortFeeds, ortOptions, selectedCases, selectedThreads } from './cases.js'

const blocks = Math.max(1, Math.round(numberOption('blocks', 'FLEXPIPE_BENCH_BLOCKS', 8)))

async function series(run: () => Promise<unknown>, pause: boolean): Promise<number> {
  const times: number[] = []
  for (let b = 0; b < blocks; b++) {
    if (pause) {
      await sleep(100)
      await run()
    }
    for (let j = 0; j < 5; j++) {
      const t0 = performance.now()
      await run()
      times.push(performance.now() - t0)
    }
  }
  return median(times)
}

const cases = option('models', 'FLEXPIPE_BENCH_MODELS') === undefined ? allCases.filter((c) => c.name === 'mobilenetv2' || c.name === 'squeezenet') : selectedCases()
for (const c of cases) {
  for (const threads of selectedThreads()) {
    const feeds = await c.feeds()
    const engine = await open(c.path, { threads })
    const session = await ort.InferenceSession.create(c.path, ortOptions(threads))
    const oFeeds = ortFeeds(feeds)
    const fp = () => engine.infer(feeds)
    const rt = () => session.run(oFeeds)
    for (let i = 0; i < 3; i++) {
      await fp()
      await rt()
    }
    const row = {
      model: c.name,
      threads,
      flexpipe_after_pause_ms: await series(fp, true),
      flexpipe_back_to_back_ms: await series(fp, false),
      ort_after_pause_ms: await series(rt, true),
      ort_back_to_back_ms: await series(rt, false),
    }
    console.log(JSON.stringify(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 100) / 100 : v]))))
    await session.release()
    await engine.close()
  }
}
