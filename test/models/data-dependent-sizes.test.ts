// SPDX-License-Identifier: Apache-2.0
// Data-dependent output sizes (Nimble's upper-bound shape functions, issue 37): NonZero and TopK with
// a k the model computes are planned at their upper bound, once, and run in stages that read the actual
// size each op wrote (lib/runtime/data-dims.ts). Checked against onnxruntime-node on a detector exported
// by torch (detect_tiny: dynamic height and width, then NonZero of a threshold and TopK of min(10, kept))
// and on hand-built graphs, with empty, partial and full selections; the arena never grows after
// open; and the typed errors where such sizes cannot be planned ahead.
import { join } from 'node:path'
import t from 'tap'
import { open, prepare, type Tensor } from '../../lib/index.js'
import { seededRandom } from '../../lib/cli/inputs.js'
import { UnsupportedOperatorError } from '../../lib/errors.js'
import { detectionPostprocess } from '../helpers/data-dependent-model.js'
import { makeModel, tempFile } from '../helpers/make-model.js'
import { fixtures, shuffled } from '../helpers/data.js'
import { runOrt } from '../helpers/ort.js'

const detector = join(fixtures, 'models', 'detect_tiny.onnx') as `${string}.onnx`

function image(h: number, w: number, seed: number, scale: number): Record<string, Tensor> {
  const r = seededRandom(seed)
  return { image: { dtype: 'float32', dims: [1, 3, h, w], data: Float32Array.from({ length: 3 * h * w }, () => (r() * 2 - 1) * scale) } }
}

/** Equal dims, and values within 1e-5 (exact for indices). */
function same(got: Record<string, Tensor>, want: Record<string, Tensor>): string | undefined {
  for (const [name, w] of Object.entries(want)) {
    const g = got[name]
    if (g === undefined) return `${name} missing`
    if (g.dims.join('x') !== w.dims.join('x')) return `${name} is [${g.dims.join(', ')}], onnxruntime [${w.dims.join(', ')}]`
    for (let i = 0; i < w.data.length; i++) {
      if (Math.abs(Number(g.data[i]) - Number(w.data[i])) > 1e-5) return `${name}[${i}] = ${g.data[i]}, onnxruntime ${w.data[i]}`
    }
  }
  return undefined
}

t.test('detect_tiny (torch export): every image size and selection equals onnxruntime; the arena is sized at open', async (t) => {
  const engine = await open(detector, { threads: 2, dims: { height: [16, 64], width: [16, 96] } })
  t.teardown(() => engine.close())
  t.same(engine.outputs.map((o) => o.dims), [['count._2f_TopK', 4], ['count._2f_TopK'], ['count._2f_TopK']], 'outputs of data-dependent size, described by the symbol of the TopK that sizes them')
  const atOpen = engine.stats()
  t.equal(atOpen.buckets.templated, atOpen.buckets.buckets, `all ${atOpen.buckets.buckets} buckets run through their template`)
  const sizes = new Set<number>()
  const cases = shuffled(Array.from({ length: 24 }, (_, i) => ({ h: 16 + ((i * 7) % 49), w: 16 + ((i * 13) % 81), seed: i + 1, scale: [0.6, 1.7, 3][i % 3]! })))
  cases.push({ h: 16, w: 16, seed: 99, scale: 0 }) // a flat image: every cell scores the same
  for (const c of cases) {
    const feeds = image(c.h, c.w, c.seed, c.scale)
    const got = await engine.infer(feeds)
    const want = await runOrt(detector, feeds, 1)
    sizes.add(want.scores!.dims[0]!)
    const diff = same(got, want)
    t.ok(diff === undefined, `${c.h}x${c.w} scale ${c.scale}: ${want.scores!.dims[0]} boxes${diff === undefined ? '' : ` (${diff})`}`)
  }
  t.ok(sizes.size >= 3 && sizes.has(10) && [...sizes].some((n) => n > 0 && n < 10), `selections of ${[...sizes].sort((a, b) => a - b).join(', ')} boxes`)
  const after = engine.stats()
  t.equal(after.arenaBytes, atOpen.arenaBytes, `the arena (${atOpen.arenaBytes} bytes) did not grow`)
  t.equal(after.plans, atOpen.plans, 'no plan was made after open')
  const profiled = await engine.inferProfiled(image(40, 40, 5, 1.7))
  t.equal(profiled.ops.length, (await engine.executionPlan(image(40, 40, 5, 1.7))).opNodes.length, 'a profiled run in stages times every op once')
  t.ok(profiled.ops.some((o) => o.opType === 'NonZero') && profiled.ops.some((o) => o.opType === 'TopK'), 'times every stage, NonZero and TopK included')
})

t.test('detect_tiny without declared dims: buckets planned as sizes come', async (t) => {
  const engine = await open(detector, { threads: 1 })
  t.teardown(() => engine.close())
  for (const [h, w] of [[24, 40], [64, 64], [20, 36]] as const) {
    const feeds = image(h, w, h + w, 1.7)
    const diff = same(await engine.infer(feeds), await runOrt(detector, feeds, 1))
    t.ok(diff === undefined, `${h}x${w}${diff === undefined ? '' : `: ${diff}`}`)
  }
})

t.test('a post-processing graph with fixed input dims: NonZero, Gather, TopK of min(5, kept)', async (t) => {
  const path = tempFile('post.onnx', detectionPostprocess(40)) as `${string}.onnx`
  const engine = await open(path, { threads: 1 })
  t.teardown(() => engine.close())
  const arena = engine.stats().arenaBytes
  const r = seededRandom(17)
  for (const pass of [0, 0.05, 0.3, 1, 0.3, 0]) {
    const scores = Float32Array.from({ length: 40 }, () => (r() < pass ? 0.5 + r() * 0.5 : r() * 0.5))
    const feeds: Record<string, Tensor> = { scores: { dtype: 'float32', dims: [1, 40], data: scores }, boxes: { dtype: 'float32', dims: [40, 4], data: Float32Array.from({ length: 160 }, () => r()) } }
    const want = await runOrt(path, feeds, 1)
    const diff = same(await engine.infer(feeds), want)
    t.ok(diff === undefined, `${want.kept!.dims[0]} of 40 kept, ${want.top_scores!.dims[0]} best${diff === undefined ? '' : `: ${diff}`}`)
  }
  t.equal(engine.stats().arenaBytes, arena, 'the arena did not grow')
})

t.test('TopK with k given by the caller: every k, and a k past the axis is a typed error', async (t) => {
  const path = tempFile('topk.onnx', makeModel({
    opset: 13,
    inputs: [{ name: 'x', dtype: 'float32', dims: [2, 'n'] }, { name: 'k', dtype: 'int64', dims: [1] }],
    outputs: [{ name: 'values', dtype: 'float32' }, { name: 'indices', dtype: 'int64' }],
    nodes: [{ op: 'TopK', inputs: ['x', 'k'], outputs: ['values', 'indices'], int: { axis: 1, largest: 0 } }],
  })) as `${string}.onnx`
  const engine = await open(path, { threads: 1, dims: { n: [1, 32] } })
  t.teardown(() => engine.close())
  const r = seededRandom(23)
  for (const [n, k] of [[32, 0], [32, 32], [7, 3], [1, 1], [20, 11]] as const) {
    const feeds: Record<string, Tensor> = { x: { dtype: 'float32', dims: [2, n], data: Float32Array.from({ length: 2 * n }, () => Math.round(r() * 8)) }, k: { dtype: 'int64', dims: [1], data: BigInt64Array.from([BigInt(k)]) } }
    const diff = same(await engine.infer(feeds), await runOrt(path, feeds, 1))
    t.ok(diff === undefined, `n ${n}, k ${k} (ties on every row)${diff === undefined ? '' : `: ${diff}`}`)
  }
  const bad: Record<string, Tensor> = { x: { dtype: 'float32', dims: [2, 4], data: new Float32Array(8) }, k: { dtype: 'int64', dims: [1], data: BigInt64Array.from([5n]) } }
  await t.rejects(engine.infer(bad), { name: 'NativeError', code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /node 'n0' \(native TopK\).*k = 5 is outside 0..4/ }, 'k = 5 on an axis of 4')
  const ok: Record<string, Tensor> = { x: { dtype: 'float32', dims: [2, 4], data: Float32Array.from([4, 3, 2, 1, 1, 2, 3, 4]) }, k: { dtype: 'int64', dims: [1], data: BigInt64Array.from([2n]) } }
  t.same(Array.from((await engine.infer(ok)).indices!.data as BigInt64Array, Number), [3, 2, 0, 1], 'the engine runs again after the error')
})

t.test('a memory-budgeted package cannot plan data-dependent sizes ahead: a typed error naming the node and open()', async (t) => {
  const out = tempFile('detect.fpk', '')
  const err = await prepare(detector, out, { dims: { height: 32, width: 48 } }).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof UnsupportedOperatorError, 'UnsupportedOperatorError')
  t.match((err as Error).message, /NonZero.*depends on the values of its inputs.*open\(\)/, (err as Error).message)
})
