// SPDX-License-Identifier: Apache-2.0
// The remaining model families of the foundation issue (torchvision VGG, SqueezeNet, ViT; DistilBERT-style
// encoder; GPT-2-style decoder) against onnxruntime-node on the same inputs: for every output,
// max |ours - ort| <= 1e-4 * max|ort| + 1e-5. Fixtures: scripts/fixtures/export_models.py.
import { join } from 'node:path'
import t from 'tap'
import { tensor, type Tensor } from '../../lib/index.js'
import { fixtures, randomFloat, randomInt64 } from '../helpers/data.js'
import { checkConformance, type ConformanceCase } from '../helpers/conformance.js'

/** DistilBERT feeds: row b is padded (mask 0) from position seq - 3b on. */
function bertFeeds(batch: number, seq: number, seed: number): () => Promise<Record<string, Tensor>> {
  return async () => {
    const mask = tensor('int64', [batch, seq])
    const m = mask.data as BigInt64Array
    for (let b = 0; b < batch; b++) for (let s = 0; s < seq; s++) m[b * seq + s] = s < seq - b * 3 ? 1n : 0n
    return { input_ids: randomInt64([batch, seq], seed, 1000), attention_mask: mask }
  }
}

/** GPT-2 feeds: token ids in [0, 500). */
function gpt2Feeds(batch: number, seq: number, seed: number): () => Promise<Record<string, Tensor>> {
  return async () => ({ input_ids: randomInt64([batch, seq], seed, 500) })
}

const models = join(fixtures, 'models')
const cases: ConformanceCase[] = [
  { name: 'vgg_small batch 1', model: join(models, 'vgg_small.onnx'), feeds: async () => ({ input: randomFloat([1, 3, 112, 112], 21) }) },
  { name: 'vgg_small batch 2', model: join(models, 'vgg_small.onnx'), feeds: async () => ({ input: randomFloat([2, 3, 112, 112], 22) }) },
  { name: 'squeezenet_small batch 1 (ceil_mode MaxPool)', model: join(models, 'squeezenet_small.onnx'), feeds: async () => ({ input: randomFloat([1, 3, 100, 100], 23) }) },
  { name: 'squeezenet_small batch 3', model: join(models, 'squeezenet_small.onnx'), feeds: async () => ({ input: randomFloat([3, 3, 100, 100], 24) }) },
  { name: 'vit_tiny batch 1', model: join(models, 'vit_tiny.onnx'), feeds: async () => ({ input: randomFloat([1, 3, 32, 32], 25) }) },
  { name: 'vit_tiny batch 4', model: join(models, 'vit_tiny.onnx'), feeds: async () => ({ input: randomFloat([4, 3, 32, 32], 26) }) },
  { name: 'gpt2_tiny batch 2 seq 12', model: join(models, 'gpt2_tiny.onnx'), feeds: gpt2Feeds(2, 12, 27) },
  { name: 'gpt2_tiny batch 1 seq 37', model: join(models, 'gpt2_tiny.onnx'), feeds: gpt2Feeds(1, 37, 28) },
  { name: 'gpt2_tiny batch 3 seq 1', model: join(models, 'gpt2_tiny.onnx'), feeds: gpt2Feeds(3, 1, 29) },
  { name: 'distilbert_tiny batch 2 seq 16 (padded)', model: join(models, 'distilbert_tiny.onnx'), feeds: bertFeeds(2, 16, 30) },
  { name: 'distilbert_tiny batch 1 seq 7', model: join(models, 'distilbert_tiny.onnx'), feeds: bertFeeds(1, 7, 31) },
  { name: 'distilbert_tiny batch 3 seq 128 (padded)', model: join(models, 'distilbert_tiny.onnx'), feeds: bertFeeds(3, 128, 32) },
]

for (const c of cases) {
  t.test(`${c.name} matches onnxruntime`, (t) => checkConformance(t, c))
}
