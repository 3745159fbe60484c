#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Times one model in flexpipe alone (no other engine in the process): median of 10 runs after 3
// warm-ups, deterministic random input. For separating our own thread scaling from interference.
//   node scripts/bench/solo.mjs .cache/bench-models/resnet50.onnx 2 1,3,224,224
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const { open } = await import(pathToFileURL(join(root, 'dist/lib/index.js')).href)
const { randomFloat } = await import(pathToFileURL(join(root, 'dist/test/helpers/data.js')).href)

const [model, threadsArg, shapeArg] = process.argv.slice(2)
if (!model || !threadsArg || !shapeArg) {
  console.error('usage: node scripts/bench/solo.mjs <model.onnx> <threads> <d0,d1,...>')
  process.exit(2)
}
const engine = await open(model, { threads: Number(threadsArg) })
const feeds = { [engine.inputs[0].name]: randomFloat(shapeArg.split(',').map(Number), 1) }
for (let i = 0; i < 3; i++) await engine.infer(feeds)
const times = []
for (let i = 0; i < 10; i++) {
  const t0 = performance.now()
  await engine.infer(feeds)
  times.push(performance.now() - t0)
}
times.sort((a, b) => a - b)
console.log(JSON.stringify({ model, threads: Number(threadsArg), median_ms: +times[5].toFixed(2), min_ms: +times[0].toFixed(2) }))
await engine.close()
