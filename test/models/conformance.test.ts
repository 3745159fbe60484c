// SPDX-License-Identifier: Apache-2.0
// Real models against onnxruntime-node on the same inputs: for every output,
// max |ours - ort| <= 1e-4 * max|ort| + 1e-5.
import { join } from 'node:path'
import t from 'tap'
import { tensor, type Tensor } from '../../lib/index.js'
import { imageTensor, readPpm } from '../../lib/cli/image.js'
import { fixtures, ocrAssets, randomFloat, randomInt64 } from '../helpers/data.js'
import { checkConformance, type ConformanceCase } from '../helpers/conformance.js'

const image = (file: string) => async () => ({ x: imageTensor(await readPpm(join(fixtures, 'images', file))) })

function bertFeeds(batch: number, seq: number, seed: number): () => Promise<Record<string, Tensor>> {
  return async () => {
    const mask = tensor('int64', [batch, seq])
    const m = mask.data as BigInt64Array
    for (let b = 0; b < batch; b++) for (let s = 0; s < seq; s++) m[b * seq + s] = s < seq - b * 3 ? 1n : 0n
    return { input_ids: randomInt64([batch, seq], seed, 1000), attention_mask: mask }
  }
}

const models = join(fixtures, 'models')
const cases: ConformanceCase[] = [
  { name: 'resnet_small batch 2', model: join(models, 'resnet_small.onnx'), feeds: async () => ({ input: randomFloat([2, 3, 64, 64], 1) }) },
  { name: 'resnet_small with external data', model: join(models, 'resnet_small_external.onnx'), feeds: async () => ({ input: randomFloat([1, 3, 64, 64], 2) }) },
  { name: 'mobilenetv2_small batch 1', model: join(models, 'mobilenetv2_small.onnx'), feeds: async () => ({ input: randomFloat([1, 3, 96, 96], 3) }) },
  { name: 'mobilenetv2_small batch 3', model: join(models, 'mobilenetv2_small.onnx'), feeds: async () => ({ input: randomFloat([3, 3, 96, 96], 4) }) },
  { name: 'bert_tiny batch 2 seq 16 (padded)', model: join(models, 'bert_tiny.onnx'), feeds: bertFeeds(2, 16, 5) },
  { name: 'bert_tiny batch 1 seq 7', model: join(models, 'bert_tiny.onnx'), feeds: bertFeeds(1, 7, 6) },
  { name: 'bert_tiny opset 17 (fused LayerNormalization)', model: join(models, 'bert_tiny_opset17.onnx'), feeds: bertFeeds(2, 12, 7) },
  { name: 'PP-OCR cls 48x320 text', model: join(ocrAssets, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'), feeds: image('text_48x320.ppm') },
  { name: 'PP-OCR cls 48x192 random', model: join(ocrAssets, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'), feeds: async () => ({ x: randomFloat([1, 3, 48, 192], 8) }) },
  { name: 'PP-OCR rec 48x320 text', model: join(ocrAssets, 'ch_PP-OCRv4_rec_infer.onnx'), feeds: image('text_48x320.ppm') },
  { name: 'PP-OCR rec 48x160 text', model: join(ocrAssets, 'ch_PP-OCRv4_rec_infer.onnx'), feeds: image('text_48x160.ppm') },
  { name: 'PP-OCR det 640x640 text', model: join(ocrAssets, 'ch_PP-OCRv4_det_infer.onnx'), feeds: image('text_640.ppm') },
]

for (const c of cases) {
  t.test(`${c.name} matches onnxruntime`, (t) => checkConformance(t, c))
}
