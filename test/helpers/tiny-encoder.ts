// SPDX-License-Identifier: Apache-2.0
// A small random BERT classifier written as a Hugging Face folder (config.json, model.safetensors,
// tokenizer.json), and a float64 reference forward of its elastic sub-models, for the elastic tests.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { EncoderConfig } from '../../lib/model/encoder-config.js'
import type { EncoderWeights } from '../../lib/prepare/encoder-weights.js'
import { shardRows } from '../../lib/model/encoder-config.js'
import { seededRandom } from '../../lib/cli/inputs.js'
import { halfValue } from '../../lib/model/half.js'

export interface TinyEncoderShape {
  hidden: number
  layers: number
  heads: number
  ffn: number
  maxPositions: number
}

export const tinyShape: TinyEncoderShape = { hidden: 32, layers: 3, heads: 4, ffn: 64, maxPositions: 24 }

const letters = 'abcdefghijklmnopqrstuvwxyz'
/** The tiny tokenizer's vocabulary: specials, the letters, their '##' forms and a few words. */
export const tinyVocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...letters, ...[...letters].map((c) => `##${c}`), 'free', 'win', 'money', 'meeting', 'hello', '!', '.', ',']

export function tinyTokenizerJson(maxLength: number): unknown {
  return {
    version: '1.0',
    truncation: { direction: 'Right', max_length: maxLength, strategy: 'LongestFirst', stride: 0 },
    padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: true, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [tinyVocab.indexOf(t)], tokens: [t] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(tinyVocab.map((t, i) => [t, i])) },
  }
}

/** float32 -> IEEE half bits (round to nearest even), for F16 safetensors. */
function toHalf(x: number): number {
  const f = new Float32Array([x])
  const u = new Uint32Array(f.buffer)[0]!
  const sign = (u >>> 16) & 0x8000
  const exp = ((u >>> 23) & 0xff) - 127 + 15
  let mant = u & 0x7fffff
  if (exp <= 0) {
    if (exp < -10) return sign
    mant |= 0x800000
    const shift = 14 - exp
    let h = mant >>> shift
    const rem = mant & ((1 << shift) - 1)
    const half = 1 << (shift - 1)
    if (rem > half || (rem === half && h & 1)) h++
    return sign | h
  }
  if (exp >= 31) return sign | 0x7c00
  let h = (exp << 10) | (mant >>> 13)
  const rem = mant & 0x1fff
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++
  return sign | h
}

/** Writes the folder; returns the tensors as written (rounded to half when f16). */
export async function writeTinyEncoder(dir: string, shape: TinyEncoderShape = tinyShape, seed = 7, f16 = true): Promise<Map<string, { dims: number[]; data: Float32Array }>> {
  await mkdir(dir, { recursive: true })
  const r = seededRandom(seed)
  const { hidden: H, layers: L, ffn: F, maxPositions: P } = shape
  const V = tinyVocab.length
  const tensors = new Map<string, { dims: number[]; data: Float32Array }>()
  const add = (name: string, dims: number[], scale: number, offset = 0): void => {
    const n = dims.reduce((a, d) => a * d, 1)
    const data = new Float32Array(n)
    // Gaussian (Box-Muller, std scale/2) with a few heavy-tail weights, like trained weights.
    for (let i = 0; i < n; i++) {
      const g = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
      data[i] = offset + g * (scale / 2) * (r() < 0.002 ? 5 : 1)
    }
    if (f16) for (let i = 0; i < n; i++) data[i] = halfValue(toHalf(data[i]!))
    tensors.set(name, { dims, data })
  }
  add('bert.embeddings.word_embeddings.weight', [V, H], 0.5)
  add('bert.embeddings.position_embeddings.weight', [P, H], 0.1)
  add('bert.embeddings.token_type_embeddings.weight', [1, H], 0.1)
  add('bert.embeddings.LayerNorm.weight', [H], 0.1, 1)
  add('bert.embeddings.LayerNorm.bias', [H], 0.05)
  const w = 1 / Math.sqrt(H)
  for (let l = 0; l < L; l++) {
    const p = `bert.encoder.layer.${l}.`
    for (const n of ['query', 'key', 'value']) {
      add(`${p}attention.self.${n}.weight`, [H, H], w * 1.5)
      add(`${p}attention.self.${n}.bias`, [H], 0.05)
    }
    add(`${p}attention.output.dense.weight`, [H, H], w)
    add(`${p}attention.output.dense.bias`, [H], 0.05)
    add(`${p}attention.output.LayerNorm.weight`, [H], 0.1, 1)
    add(`${p}attention.output.LayerNorm.bias`, [H], 0.05)
    add(`${p}intermediate.dense.weight`, [F, H], w)
    add(`${p}intermediate.dense.bias`, [F], 0.05)
    add(`${p}output.dense.weight`, [H, F], 1 / Math.sqrt(F))
    add(`${p}output.dense.bias`, [H], 0.05)
    add(`${p}output.LayerNorm.weight`, [H], 0.1, 1)
    add(`${p}output.LayerNorm.bias`, [H], 0.05)
  }
  add('bert.pooler.dense.weight', [H, H], w)
  add('bert.pooler.dense.bias', [H], 0.05)
  add('classifier.weight', [2, H], w * 2)
  add('classifier.bias', [2], 0.05)
  await writeFile(join(dir, 'model.safetensors'), safetensorsBytes(tensors, f16))
  const config = {
    architectures: ['BertForSequenceClassification'],
    model_type: 'bert',
    hidden_size: H,
    num_hidden_layers: L,
    num_attention_heads: shape.heads,
    intermediate_size: F,
    hidden_act: 'gelu',
    max_position_embeddings: P,
    type_vocab_size: 1,
    vocab_size: V,
    layer_norm_eps: 1e-12,
    num_labels: 2,
    id2label: { '0': 'ham', '1': 'spam' },
  }
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 1))
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(P)))
  return tensors
}


export function safetensorsBytes(tensors: Map<string, { dims: number[]; data: Float32Array }>, f16: boolean): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } }
  let at = 0
  const parts: Uint8Array[] = []
  for (const [name, t] of tensors) {
    let bytes: Uint8Array
    if (f16) {
      const h = new Uint16Array(t.data.length)
      t.data.forEach((v, i) => (h[i] = toHalf(v)))
      bytes = new Uint8Array(h.buffer)
    } else bytes = new Uint8Array(t.data.slice().buffer)
    header[name] = { dtype: f16 ? 'F16' : 'F32', shape: t.dims, data_offsets: [at, at + bytes.length] }
    at += bytes.length
    parts.push(bytes)
  }
  let json = JSON.stringify(header)
  while ((8 + json.length) % 8 !== 0) json += ' '
  const head = Buffer.from(json, 'utf8')
  const out = new Uint8Array(8 + head.length + at)
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true)
  out.set(head, 8)
  let p = 8 + head.length
  for (const b of parts) {
    out.set(b, p)
    p += b.length
  }
  return out
}

/**
 * float64 forward of sub-model depth x width (first `width` shards per layer) on token ids, with each
 * layer's shard-major weights taken from `shards[l]` (default: the exact weights). Returns the logits.
 */
export function referenceLogits(c: EncoderConfig, w: EncoderWeights, depth: number, width: number, ids: readonly number[], seq: number, shards?: readonly Float32Array[]): number[] {
  const H = c.hidden
  const dh = c.headDim
  const f = c.ffn / c.heads
  const rowsPer = shardRows(c)
  const n = ids.length
  const ln = (x: Float64Array, g: Float32Array, b: Float32Array): void => {
    for (let t = 0; t < seq; t++) {
      let mean = 0
      for (let i = 0; i < H; i++) mean += x[t * H + i]!
      mean /= H
      let v = 0
      for (let i = 0; i < H; i++) v += (x[t * H + i]! - mean) ** 2
      const inv = 1 / Math.sqrt(v / H + c.eps)
      for (let i = 0; i < H; i++) x[t * H + i] = (x[t * H + i]! - mean) * inv * g[i]! + b[i]!
    }
  }
  let x = new Float64Array(seq * H)
  for (let t = 0; t < seq; t++) {
    const id = t < n ? ids[t]! : 0
    for (let i = 0; i < H; i++) x[t * H + i] = w.wordEmbeddings[id * H + i]! + w.positionEmbeddings[t * H + i]! + w.tokenTypeEmbeddings[i]!
  }
  ln(x, w.embLnGamma, w.embLnBeta)
  const gelu = (v: number): number => 0.5 * v * (1 + erf(v / Math.SQRT2))
  for (let l = 0; l < depth; l++) {
    const flat = (shards ?? w.shards)[l]!
    const lr = w.layers[l]!
    // Row r of block b of shard j.
    const row = (j: number, blockStart: number, r: number): Float32Array => flat.subarray((j * rowsPer + blockStart + r) * H, (j * rowsPer + blockStart + r + 1) * H)
    const proj = (blockStart: number, bias: Float32Array): Float64Array => {
      const out = new Float64Array(seq * width * dh)
      for (let t = 0; t < seq; t++) {
        for (let j = 0; j < width; j++) {
          for (let r = 0; r < dh; r++) {
            const wr = row(j, blockStart, r)
            let s = bias[j * dh + r]!
            for (let i = 0; i < H; i++) s += x[t * H + i]! * wr[i]!
            out[t * width * dh + j * dh + r] = s
          }
        }
      }
      return out
    }
    const q = proj(0, lr.bq)
    const k = proj(dh, lr.bk)
    const v = proj(2 * dh, lr.bv)
    const ctx = new Float64Array(seq * width * dh)
    const W = width * dh
    for (let j = 0; j < width; j++) {
      for (let t = 0; t < seq; t++) {
        const scores = new Float64Array(seq)
        let max = -Infinity
        for (let u = 0; u < seq; u++) {
          let s = 0
          for (let r = 0; r < dh; r++) s += q[t * W + j * dh + r]! * k[u * W + j * dh + r]!
          s = s / Math.sqrt(dh) + (u < n ? 0 : -10000)
          scores[u] = s
          max = Math.max(max, s)
        }
        let sum = 0
        for (let u = 0; u < seq; u++) sum += scores[u] = Math.exp(scores[u]! - max)
        for (let r = 0; r < dh; r++) {
          let s = 0
          for (let u = 0; u < seq; u++) s += scores[u]! * v[u * W + j * dh + r]!
          ctx[t * W + j * dh + r] = s / sum
        }
      }
    }
    const y = new Float64Array(seq * H)
    for (let t = 0; t < seq; t++) {
      for (let i = 0; i < H; i++) {
        let s = lr.bo[i]!
        for (let j = 0; j < width; j++) for (let r = 0; r < dh; r++) s += ctx[t * W + j * dh + r]! * row(j, 3 * dh, r)[i]!
        y[t * H + i] = s + x[t * H + i]!
      }
    }
    ln(y, lr.ln1Gamma, lr.ln1Beta)
    const hdim = width * f
    const hmid = new Float64Array(seq * hdim)
    for (let t = 0; t < seq; t++) {
      for (let j = 0; j < width; j++) {
        for (let r = 0; r < f; r++) {
          const wr = row(j, 4 * dh, r)
          let s = lr.b1[j * f + r]!
          for (let i = 0; i < H; i++) s += y[t * H + i]! * wr[i]!
          hmid[t * hdim + j * f + r] = gelu(s)
        }
      }
    }
    const out = new Float64Array(seq * H)
    for (let t = 0; t < seq; t++) {
      for (let i = 0; i < H; i++) {
        let s = lr.b2[i]!
        for (let j = 0; j < width; j++) for (let r = 0; r < f; r++) s += hmid[t * hdim + j * f + r]! * row(j, 4 * dh + f, r)[i]!
        out[t * H + i] = s + y[t * H + i]!
      }
    }
    ln(out, lr.ln2Gamma, lr.ln2Beta)
    x = out
  }
  const pooled = new Float64Array(H)
  for (let i = 0; i < H; i++) {
    let s = w.poolerBias[i]!
    for (let k2 = 0; k2 < H; k2++) s += x[k2]! * w.poolerWeight[i * H + k2]!
    pooled[i] = Math.tanh(s)
  }
  return Array.from({ length: c.labels.length }, (_, o) => {
    let s = w.classifierBias[o]!
    for (let i = 0; i < H; i++) s += pooled[i]! * w.classifierWeight[o * H + i]!
    return s
  })
}

/** erf to ~1e-15 (Abramowitz-Stegun would be too coarse for a float64 reference): series / continued fraction. */
export function erf(x: number): number {
  const ax = Math.abs(x)
  if (ax < 2.5) {
    let sum = ax
    let term = ax
    for (let n = 1; n < 80; n++) {
      term *= (-ax * ax) / n
      const add = term / (2 * n + 1)
      sum += add
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum
  }
  // erfc continued fraction
  let f = 0
  for (let n = 60; n >= 1; n--) f = (n / 2) / (ax + f)
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f)
  return Math.sign(x) * (1 - erfc)
}
