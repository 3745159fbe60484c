// SPDX-License-Identifier: Apache-2.0
// Splits a BERT encoder's weights into what stays resident and what becomes shards.
//
// Shard h of a layer (the STI seed's vertical slice, Table 1) is six row blocks, each row `hidden`
// floats, in this order:
//   Q   rows [h*dh, (h+1)*dh) of attention.self.query.weight     ([out, in] as torch.nn.Linear)
//   K   rows of attention.self.key.weight, V rows of attention.self.value.weight
//   Oᵀ  columns [h*dh, (h+1)*dh) of attention.output.dense.weight, transposed
//   F1  rows [h*f, (h+1)*f) of intermediate.dense.weight          (f = ffn / heads)
//   F2ᵀ columns [h*f, (h+1)*f) of output.dense.weight, transposed
// so a sub-layer of the first m shards computes Q = X Wqᵀ with Wq = the m Q blocks stacked (and the
// same for K, V, F1), and attention-out = ctx · [Oᵀ blocks stacked] (the same for F2). A layer's
// flat array (shard 0, shard 1, ...) is what quantization fits its Gaussian to (seed §6).
// Biases, LayerNorms, embeddings, pooler and classifier stay float32 and resident.
import { ModelFormatError } from '../errors.js'
import type { EncoderConfig } from '../model/encoder-config.js'
import { shardWeights } from '../model/encoder-config.js'
import type { SafeTensor } from '../model/safetensors.js'

export interface LayerResident {
  readonly bq: Float32Array
  readonly bk: Float32Array
  readonly bv: Float32Array
  readonly bo: Float32Array
  readonly ln1Gamma: Float32Array
  readonly ln1Beta: Float32Array
  readonly b1: Float32Array
  readonly b2: Float32Array
  readonly ln2Gamma: Float32Array
  readonly ln2Beta: Float32Array
}

export interface EncoderWeights {
  readonly wordEmbeddings: Float32Array // [vocab, hidden]
  readonly positionEmbeddings: Float32Array // [maxPositions, hidden]
  readonly tokenTypeEmbeddings: Float32Array // [typeVocab, hidden]
  readonly embLnGamma: Float32Array
  readonly embLnBeta: Float32Array
  readonly layers: readonly LayerResident[]
  /** Per layer, the flat shard-major array: heads × shardWeights(config) floats. */
  readonly shards: readonly Float32Array[]
  readonly poolerWeight: Float32Array // [hidden, hidden]
  readonly poolerBias: Float32Array
  readonly classifierWeight: Float32Array // [labels, hidden]
  readonly classifierBias: Float32Array
}

/** Names of the six row blocks of a shard, in storage order. */
export const shardBlocks = ['q', 'k', 'v', 'oT', 'f1', 'f2T'] as const

export function extractEncoderWeights(config: EncoderConfig, tensors: ReadonlyMap<string, SafeTensor>, label: string): EncoderWeights {
  const prefix = tensors.has('bert.embeddings.word_embeddings.weight') ? 'bert.' : ''
  const { hidden: H, heads: A, headDim: dh, ffn: F } = config
  const get = (name: string, dims: readonly number[]): Float32Array => {
    const t = tensors.get(name)
    if (t === undefined) throw new ModelFormatError(`${label}: tensor '${name}' is missing; expected Hugging Face BERT names (BertForSequenceClassification)`)
    if (t.dims.length !== dims.length || t.dims.some((d, i) => d !== dims[i])) {
      throw new ModelFormatError(`${label}: tensor '${name}' has shape [${t.dims.join(', ')}], the config implies [${dims.join(', ')}]`)
    }
    return t.data
  }
  const e = `${prefix}embeddings.`
  const layers: LayerResident[] = []
  const shards: Float32Array[] = []
  const f = F / A
  for (let l = 0; l < config.layers; l++) {
    const p = `${prefix}encoder.layer.${l}.`
    const wq = get(`${p}attention.self.query.weight`, [H, H])
    const wk = get(`${p}attention.self.key.weight`, [H, H])
    const wv = get(`${p}attention.self.value.weight`, [H, H])
    const wo = get(`${p}attention.output.dense.weight`, [H, H])
    const w1 = get(`${p}intermediate.dense.weight`, [F, H])
    const w2 = get(`${p}output.dense.weight`, [H, F])
    layers.push({
      bq: get(`${p}attention.self.query.bias`, [H]),
      bk: get(`${p}attention.self.key.bias`, [H]),
      bv: get(`${p}attention.self.value.bias`, [H]),
      bo: get(`${p}attention.output.dense.bias`, [H]),
      ln1Gamma: get(`${p}attention.output.LayerNorm.weight`, [H]),
      ln1Beta: get(`${p}attention.output.LayerNorm.bias`, [H]),
      b1: get(`${p}intermediate.dense.bias`, [F]),
      b2: get(`${p}output.dense.bias`, [H]),
      ln2Gamma: get(`${p}output.LayerNorm.weight`, [H]),
      ln2Beta: get(`${p}output.LayerNorm.bias`, [H]),
    })
    const flat = new Float32Array(A * shardWeights(config))
    let at = 0
    const rows = (w: Float32Array, r0: number, n: number): void => {
      flat.set(w.subarray(r0 * H, (r0 + n) * H), at)
      at += n * H
    }
    // Columns [c0, c0+n) of a [H, cols] matrix, transposed to n rows of H.
    const colsT = (w: Float32Array, cols: number, c0: number, n: number): void => {
      for (let c = 0; c < n; c++) {
        for (let r = 0; r < H; r++) flat[at + c * H + r] = w[r * cols + c0 + c]!
      }
      at += n * H
    }
    for (let h = 0; h < A; h++) {
      rows(wq, h * dh, dh)
      rows(wk, h * dh, dh)
      rows(wv, h * dh, dh)
      colsT(wo, H, h * dh, dh)
      rows(w1, h * f, f)
      colsT(w2, F, h * f, f)
    }
    shards.push(flat)
  }
  return {
    wordEmbeddings: get(`${e}word_embeddings.weight`, [config.vocab, H]),
    positionEmbeddings: get(`${e}position_embeddings.weight`, [config.maxPositions, H]),
    tokenTypeEmbeddings: get(`${e}token_type_embeddings.weight`, [config.typeVocab, H]),
    embLnGamma: get(`${e}LayerNorm.weight`, [H]),
    embLnBeta: get(`${e}LayerNorm.bias`, [H]),
    layers,
    shards,
    poolerWeight: get(`${prefix}pooler.dense.weight`, [H, H]),
    poolerBias: get(`${prefix}pooler.dense.bias`, [H]),
    classifierWeight: get('classifier.weight', [config.labels.length, H]),
    classifierBias: get('classifier.bias', [config.labels.length]),
  }
}
