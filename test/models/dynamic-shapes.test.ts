// SPDX-License-Identifier: Apache-2.0
// Dynamic shapes (Nimble, issue 37): an ONNX model opened with declared dim ranges plans every shape
// bucket at open and runs each input shape on its bucket's plan through the bucket's program template.
// Checked on real models against onnxruntime-node at every length of a range, in a shuffled order
// (so that each call follows a call of another shape), with the arena never growing after open; and the
// typed errors for dims outside their range or declared wrongly.
import t from 'tap'
import { open, type Tensor } from '../../lib/index.js'
import { compareTensors, maxAbs } from '../helpers/compare.js'
import { runOrt } from '../helpers/ort.js'
import { join } from 'node:path'
import { fixtures, shuffled } from '../helpers/data.js'
import { ocrModelPath } from '../../lib/cli/demo.js'

const fixtureModel = (name: string): string => join(fixtures, 'models', name)

function tokens(batch: number, seq: number, seed: number): Record<string, Tensor> {
  const n = batch * seq
  const ids = new BigInt64Array(n)
  for (let i = 0; i < n; i++) ids[i] = BigInt(1 + ((i * 7919 + seed * 104729) % 490)) // the tiny models' vocabularies have 500 entries or more
  const mask = new BigInt64Array(n).fill(1n)
  if (seq > 2) mask[n - 1] = 0n // a padded last token: the mask path is exercised too
  return { input_ids: { dtype: 'int64', dims: [batch, seq], data: ids }, attention_mask: { dtype: 'int64', dims: [batch, seq], data: mask } }
}

function images(batch: number, size: number, seed: number): Record<string, Tensor> {
  const data = Float32Array.from({ length: batch * 3 * size * size }, (_, i) => Math.sin(seed * 3.7 + i * 0.011))
  return { input: { dtype: 'float32', dims: [batch, 3, size, size], data } }
}

async function checkAgainstOrt(t: { ok: (c: boolean, m: string) => void }, model: string, feeds: Record<string, Tensor>, got: Record<string, Tensor>, what: string): Promise<void> {
  const want = await runOrt(model, feeds, 1)
  for (const [name, w] of Object.entries(want)) {
    const atol = 1e-4 * maxAbs(w) + 1e-5
    const r = compareTensors(got[name]!, w, atol, 0)
    t.ok(r.ok, `${what}: ${name} [${w.dims.join(', ')}] max |diff| ${r.maxAbsDiff.toExponential(2)} <= ${atol.toExponential(2)}${r.reason ? ` (${r.reason})` : ''}`)
  }
}

for (const [name, maxSeq] of [
  ['bert_tiny.onnx', 40],
  ['distilbert_tiny.onnx', 24],
  ['gpt2_tiny.onnx', 24],
] as const) {
  t.test(`${name}: every length 1..${maxSeq}, shuffled, equals onnxruntime; the arena is sized at open`, async (t) => {
    const model = fixtureModel(name)
    const dims: Record<string, [number, number]> = name.startsWith('gpt2') ? { batch: [1, 1], seq_len: [1, maxSeq] } : { batch: [1, 2], seq_len: [1, maxSeq] }
    const engine = await open(model as `${string}.onnx`, { threads: 2, dims, maxPlans: 64 })
    t.teardown(() => engine.close())
    const atOpen = engine.stats()
    t.ok(atOpen.buckets.buckets > 1, `${atOpen.buckets.buckets} buckets planned at open`)
    t.equal(atOpen.buckets.templated, atOpen.buckets.buckets, 'every bucket runs through its template')
    const lengths = shuffled(Array.from({ length: maxSeq }, (_, i) => i + 1))
    const shapes = new Set<string>()
    for (const [k, seq] of lengths.entries()) {
      const batch = dims.batch![1] === 2 && k % 3 === 0 ? 2 : 1
      shapes.add(`${batch}x${seq}`)
      const feeds = name.startsWith('gpt2') ? { input_ids: tokens(batch, seq, k).input_ids! } : tokens(batch, seq, k)
      const got = await engine.infer(feeds)
      await checkAgainstOrt(t, model, feeds, got, `batch ${batch} seq ${seq}`)
    }
    const after = engine.stats()
    t.equal(after.arenaBytes, atOpen.arenaBytes, `the arena stayed at ${atOpen.arenaBytes} bytes over ${maxSeq} lengths`)
    t.equal(after.plans, atOpen.plans, 'no plan was made after open')
    t.equal(after.buckets.shapePrograms, Math.min(64, shapes.size), 'one program per shape seen, at most maxPlans')
  })
}

t.test('a CNN at batch 1..4 (resnet_small): each batch equals onnxruntime, the arena is sized at open', async (t) => {
  const model = fixtureModel('resnet_small.onnx')
  const engine = await open(model as `${string}.onnx`, { threads: 2, dims: { batch: [1, 4] } })
  t.teardown(() => engine.close())
  const atOpen = engine.stats()
  t.equal(atOpen.buckets.buckets, 3, 'buckets [1,1], [2,2], [3,4]')
  for (const batch of [3, 1, 4, 2, 3, 1]) {
    const feeds = images(batch, 64, batch)
    await checkAgainstOrt(t, model, feeds, await engine.infer(feeds), `batch ${batch}`)
  }
  t.equal(engine.stats().arenaBytes, atOpen.arenaBytes, 'the arena did not grow')
})

t.test('without declared dims, buckets are made as shapes come and a new shape in a seen bucket plans nothing', async (t) => {
  const model = fixtureModel('bert_tiny.onnx')
  const engine = await open(model as `${string}.onnx`, { threads: 1 })
  t.teardown(() => engine.close())
  await engine.infer(tokens(1, 64, 1))
  const first = engine.stats()
  t.equal(first.buckets.buckets, 1, 'one bucket (33..64)')
  for (const seq of [33, 40, 47, 50, 63]) {
    const feeds = tokens(1, seq, seq)
    await checkAgainstOrt(t, model, feeds, await engine.infer(feeds), `seq ${seq}`)
  }
  const after = engine.stats()
  t.equal(after.buckets.buckets, 1, 'still one bucket')
  t.equal(after.plans, first.plans, 'no new plan')
  t.equal(after.arenaBytes, first.arenaBytes, 'no new memory')
  // More shapes than maxPlans (16): programs are dropped and made again, with the same results.
  const at33 = await engine.infer(tokens(1, 33, 7))
  for (let seq = 34; seq <= 60; seq++) await engine.infer(tokens(1, seq, 7))
  t.equal(engine.stats().buckets.shapePrograms, 16, 'at most maxPlans shape programs kept')
  const again = await engine.infer(tokens(1, 33, 7))
  for (const k of Object.keys(at33)) t.same(Array.from(again[k]!.data as Float32Array), Array.from(at33[k]!.data as Float32Array), `${k} at seq 33 after its program was dropped: the same`)
})

t.test('bad dims: outside the range, unknown names, models without symbolic dims, bad ranges', async (t) => {
  const model = fixtureModel('bert_tiny.onnx') as `${string}.onnx`
  const engine = await open(model, { threads: 1, dims: { batch: [1, 1], seq_len: [4, 16] } })
  t.teardown(() => engine.close())
  await t.rejects(engine.infer(tokens(1, 17, 0)), { code: 'ERR_FLEXPIPE_SHAPE', message: /input 'input_ids' dim 1: 'seq_len' is 17, outside its declared range 4\.\.16; open the model with dims: \{ "seq_len": \[4, 17\] \}/ })
  await t.rejects(engine.infer(tokens(1, 3, 0)), { code: 'ERR_FLEXPIPE_SHAPE', message: /'seq_len' is 3, outside its declared range 4\.\.16/ })
  await t.rejects(engine.infer(tokens(2, 8, 0)), { code: 'ERR_FLEXPIPE_SHAPE', message: /'batch' is 2, outside its declared range 1\.\.1/ })
  const ok = await engine.infer(tokens(1, 9, 0))
  t.same(ok.last_hidden_state?.dims.slice(0, 2) ?? Object.values(ok)[0]!.dims.slice(0, 2), [1, 9], 'a good call after the refused ones')
  await t.rejects(open(model, { dims: { seq: [1, 8] } }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /no symbolic input dim 'seq'; its symbolic dims are batch, seq_len/ })
  await t.rejects(open(model, { dims: { seq_len: [8, 1] } }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' })
  await t.rejects(open(model, { dims: { seq_len: 128 } as never }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /expected \[min, max\]/ })
  await t.rejects(open(model, { buckets: { seq_len: [8, 16] } }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /buckets need the dim declared/ })
  // bert_tiny has 128 position embeddings: a range past them breaks a constraint of the model at its ceiling.
  await t.rejects(open(model, { dims: { batch: [1, 1], seq_len: [1, 200] } }), { code: 'ERR_FLEXPIPE_SHAPE', message: /dims: the model cannot run at batch = 1, seq_len = 200, inside the declared ranges \(.*\); declare ranges the model accepts/ })
  // Undeclared, a length past them is refused for itself, and the engine still runs the lengths it can.
  const lazy = await open(model, { threads: 1 })
  t.teardown(() => lazy.close())
  await t.rejects(lazy.infer(tokens(1, 150, 0)), { code: 'ERR_FLEXPIPE_SHAPE' })
  t.same(Object.values(await lazy.infer(tokens(1, 100, 0)))[0]!.dims.slice(0, 1), [1], 'seq 100 after the refused 150')
})

t.test('PP-OCRv4 rec at widths 80..512: every bucket runs the ceiling kernel choices, each width equals onnxruntime', async (t) => {
  const model = ocrModelPath('ch_PP-OCRv4_rec_infer.onnx')
  const engine = await open(model as `${string}.onnx`, { threads: 2, dims: { 'p2o.DynamicDimension.0': [1, 1], 'p2o.DynamicDimension.1': [80, 512] } })
  t.teardown(() => engine.close())
  const atOpen = engine.stats()
  t.equal(atOpen.buckets.buckets, 3, 'buckets 80..128, 129..256, 257..512')
  t.equal(atOpen.buckets.templated, 3, 'each with its template (a convolution keeps the ceiling algorithm and slices)')
  for (const width of [200, 80, 512, 129, 333, 97, 256]) {
    const data = Float32Array.from({ length: 3 * 48 * width }, (_, i) => Math.sin(i * 0.013 + width))
    const feeds = { x: { dtype: 'float32', dims: [1, 3, 48, width], data } as Tensor }
    await checkAgainstOrt(t, model, feeds, await engine.infer(feeds), `width ${width}`)
  }
  t.equal(engine.stats().arenaBytes, atOpen.arenaBytes, 'the arena did not grow')
  t.equal(engine.stats().plans, atOpen.plans, 'no plan after open')
})
