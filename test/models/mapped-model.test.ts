// SPDX-License-Identifier: Apache-2.0
// An ONNX model is memory-mapped while it is opened and first planned (lib/runtime/engine.ts): the first
// plan writes the weights into the arena from the mapping, then the large initializers become ranges
// of the file. A later plan that needs a weight again (another input size, another convolution
// algorithm, another packed form) reads it from the file: the same result as onnxruntime, and a file
// truncated since then is an IOError, not a fault of the process.
import { truncateSync } from 'node:fs'
import t from 'tap'
import { IOError, open } from '../../lib/index.js'
import { compareTensors } from '../helpers/compare.js'
import { seededInput, seededWeights } from '../helpers/conv-graph.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { runOrt } from '../helpers/ort.js'

const weights = seededWeights(31)

// x [1, 64, h, w] -> 3x3 conv 64 -> 64 (147 KiB of weights): Winograd F(6,3) at 64x64, F(2,3) at 8x8,
// each with its own transformed filter.
function convModel(): Uint8Array {
  return makeModel({
    rawData: true,
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 64, 'h', 'w'] }],
    outputs: [{ name: 'y', dtype: 'float32' }],
    initializers: [weights('w', [64, 64, 3, 3], 0.05), weights('b', [64])],
    nodes: [{ op: 'Conv', inputs: ['x', 'w', 'b'], outputs: ['y'], ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } }],
  })
}

t.test('a second input size plans from the file after the first and matches onnxruntime', async (t) => {
  const path = tempFile('mapped.onnx', convModel()) as `${string}.onnx`
  const engine = await open(path, { threads: 1 })
  t.teardown(() => engine.close())
  for (const size of [64, 8, 20]) {
    const feeds = { x: seededInput([1, 64, size, size], size) }
    const want = await runOrt(path, feeds)
    const got = await engine.infer(feeds)
    const c = compareTensors(got.y!, want.y!, 1e-4, 1e-4)
    t.ok(c.ok, `${size}x${size}: max |diff| ${c.maxAbsDiff}${c.ok ? '' : ` (${c.reason})`}`)
  }
  // Each size lies in its own shape bucket (h, w in 33..64, 5..8, 17..32); a bucket whose template does
  // not hold at its probes (17x17 takes another Winograd tile than 32x32) plans its one shape alone.
  const s = engine.stats()
  t.equal(s.buckets.buckets, 3, 'three buckets')
  t.equal(s.plans, s.buckets.buckets + (s.buckets.buckets - s.buckets.templated), 'a plan per bucket, and one per shape of a bucket without a template')
})

t.test('a model file truncated after the first plan: a later plan that needs its weights is an IOError', async (t) => {
  const path = tempFile('truncated-later.onnx', convModel()) as `${string}.onnx`
  const engine = await open(path, { threads: 1 })
  t.teardown(() => engine.close())
  const first = await engine.infer({ x: seededInput([1, 64, 64, 64], 1) })
  t.same(first.y!.dims, [1, 64, 64, 64])
  truncateSync(path, 100)
  const again = await engine.infer({ x: seededInput([1, 64, 64, 64], 2) })
  t.same(again.y!.dims, [1, 64, 64, 64], 'the planned size still runs (its weights are in the arena)')
  const err = await engine.infer({ x: seededInput([1, 64, 8, 8], 3) }).catch((e: unknown) => e)
  t.ok(err instanceof IOError, `a new size whose filter must be read again: ${(err as Error).message}`)
  t.equal((err as IOError).code, 'ERR_FLEXPIPE_IO')
})
