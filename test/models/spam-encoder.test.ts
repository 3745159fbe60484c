// SPDX-License-Identifier: Apache-2.0
// The elastic spam/ham encoder fixture (test/fixtures/spam-encoder, scripts/fixtures/train_encoder.py):
// its tokenizer.json through @huggingface/tokenizers reproduces the Python ids, flexpipe runs its
// model.onnx (fp16 weights as external data inside model.safetensors, Cast to float) to onnxruntime's
// logits, and the whole fixture stays within 12 MB.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Tokenizer } from '@huggingface/tokenizers'
import t from 'tap'
import { open, tensor, type Tensor } from '../../lib/index.js'
import { fixtures } from '../helpers/data.js'
import { runOrt } from '../helpers/ort.js'

const dir = join(fixtures, 'spam-encoder')
const modelPath = join(dir, 'model.onnx')
const maxLength = 128
const readJson = (name: string): unknown => JSON.parse(readFileSync(join(dir, name), 'utf8'))

interface DevEmail {
  text: string
  label: 0 | 1
}
const dev = readFileSync(join(dir, 'dev.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as DevEmail)
const sample = readJson('tokenized-sample.json') as { ids: number[][]; logits: number[][] }

/**
 * @huggingface/tokenizers 0.2.0 ignores tokenizer.json's "truncation": encode the content alone and
 * keep its first 126 ids between [CLS] and [SEP] (the Rust library's LongestFirst, direction Right).
 */
function makeEncoder(): (text: string) => number[] {
  const tokenizer = new Tokenizer(readJson('tokenizer.json') as object, {})
  const cls = tokenizer.token_to_id('[CLS]')!
  const sep = tokenizer.token_to_id('[SEP]')!
  return (text) => [cls, ...tokenizer.encode(text, { add_special_tokens: false }).ids.slice(0, maxLength - 2), sep]
}

function feeds(ids: number[], padTo = ids.length): Record<string, Tensor> {
  const input = tensor('int64', [1, padTo])
  const mask = tensor('int64', [1, padTo])
  ids.forEach((id, i) => {
    ;(input.data as BigInt64Array)[i] = BigInt(id)
    ;(mask.data as BigInt64Array)[i] = 1n
  })
  return { input_ids: input, attention_mask: mask }
}

const maxAbs = (xs: ArrayLike<number>): number => Math.max(...Array.from(xs, Math.abs))
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => Math.max(...Array.from(a, (v, i) => Math.abs(v - b[i]!)))

t.test('tokenizer.json through @huggingface/tokenizers reproduces the Python ids of the first 16 dev texts', async (t) => {
  const encode = makeEncoder()
  t.equal(sample.ids.length, 16)
  sample.ids.forEach((want, i) => t.same(encode(dev[i]!.text), want, `dev text ${i}`))
  t.ok(sample.ids.some((ids) => ids.length === maxLength), 'some texts are truncated to 128 ids')
})

t.test('flexpipe logits match onnxruntime-node on 8 dev emails and predict the same labels', async (t) => {
  // Both run the same fp32 graph on the same Cast(fp16) weights; only summation order and the
  // exp/erf/tanh approximations differ, each ~1e-7 relative per op. Through 6 layers of 128-token
  // attention that stays far below the conformance bound used for every other model fixture,
  // 1e-4 * max|ort| + 1e-5 (typical measured difference: ~1e-7 on logits of magnitude ~5).
  const encode = makeEncoder()
  const engine = await open(modelPath, { threads: 2 })
  t.teardown(() => engine.close())
  t.same(engine.inputs, [
    { name: 'input_ids', dtype: 'int64', dims: [1, 'seq'] },
    { name: 'attention_mask', dtype: 'int64', dims: [1, 'seq'] },
  ])
  let correct = 0
  for (let i = 0; i < 8; i++) {
    const ids = encode(dev[i]!.text)
    const ours = (await engine.infer(feeds(ids))).logits!
    const ref = (await runOrt(modelPath, feeds(ids))).logits!
    t.same(ours.dims, [1, 2])
    const o = ours.data as Float32Array
    const r = ref.data as Float32Array
    const tol = 1e-4 * maxAbs(r) + 1e-5
    t.ok(maxDiff(o, r) <= tol, `email ${i}: max |flexpipe - ort| ${maxDiff(o, r).toExponential(2)} <= ${tol.toExponential(2)}`)
    t.ok(maxDiff(o, sample.logits[i]!) <= 1e-3, `email ${i}: flexpipe matches the torch logits within 1e-3`)
    const label = o[1]! > o[0]! ? 1 : 0
    t.equal(label, r[1]! > r[0]! ? 1 : 0, `email ${i}: same predicted label`)
    if (label === dev[i]!.label) correct++
  }
  t.ok(correct >= 7, `${correct}/8 predictions are right`)
})

t.test('padding with attention_mask 0 does not change the logits', async (t) => {
  const encode = makeEncoder()
  const short = dev.map((d) => encode(d.text)).find((ids) => ids.length < 100)
  if (short === undefined) throw new Error('dev.jsonl has no text shorter than 100 ids')
  const engine = await open(modelPath, { threads: 1 })
  t.teardown(() => engine.close())
  const plain = (await engine.infer(feeds(short))).logits!.data as Float32Array
  const padded = (await engine.infer(feeds(short, maxLength))).logits!.data as Float32Array
  t.ok(maxDiff(plain, padded) <= 1e-4 * maxAbs(plain) + 1e-5, `max diff ${maxDiff(plain, padded).toExponential(2)}`)
})

t.test('the fixture is at most 12 MB and the safetensors header follows the spec names', async (t) => {
  const files = readdirSync(dir)
  const total = files.reduce((sum, f) => sum + statSync(join(dir, f)).size, 0)
  t.ok(total <= 12_000_000, `test/fixtures/spam-encoder is ${total} bytes`)
  const raw = readFileSync(join(dir, 'model.safetensors'))
  const header = JSON.parse(raw.subarray(8, 8 + Number(raw.readBigUInt64LE(0))).toString('utf8')) as Record<string, { dtype: string; shape: number[] }>
  const config = readJson('config.json') as { vocab_size: number; hidden_size: number; num_hidden_layers: number; intermediate_size: number }
  const [v, h, f] = [config.vocab_size, config.hidden_size, config.intermediate_size]
  t.same([h, config.num_hidden_layers, f], [256, 6, 1024])
  const tensors = Object.entries(header).filter(([name]) => name !== '__metadata__')
  t.ok(tensors.every(([, e]) => e.dtype === 'F16'), 'every tensor is F16')
  t.same(header['bert.embeddings.word_embeddings.weight']?.shape, [v, h])
  t.same(header['bert.embeddings.position_embeddings.weight']?.shape, [maxLength, h])
  t.same(header['bert.encoder.layer.5.intermediate.dense.weight']?.shape, [f, h])
  t.same(header['bert.encoder.layer.5.output.dense.weight']?.shape, [h, f])
  t.same(header['classifier.weight']?.shape, [2, h])
  t.same(header['__metadata__'], { format: 'pt' })
  t.equal(Object.keys(header).length, 1 + 5 + 6 * 16 + 2 + 2, 'metadata + every BertForSequenceClassification tensor')
})
