// SPDX-License-Identifier: Apache-2.0
// The encoder an elastic package holds, read from a Hugging Face BERT config.json.
//
// flexpipe's elastic engine runs post-LayerNorm BERT-style sequence classifiers
// (BertForSequenceClassification): embeddings (word + position + token type, LayerNorm), L layers of
// self-attention and a GELU feed-forward network, a tanh pooler on [CLS] and a linear classifier.
// Every layer splits into `heads` vertical shards (see encoder-weights.ts).
import { readFile } from 'node:fs/promises'
import { ModelFormatError } from '../errors.js'

export interface EncoderConfig {
  readonly hidden: number
  readonly layers: number
  readonly heads: number
  readonly headDim: number
  readonly ffn: number
  readonly vocab: number
  readonly maxPositions: number
  readonly typeVocab: number
  readonly eps: number
  /** GELU form: 'erf' (hidden_act "gelu") or 'tanh' ("gelu_new", "gelu_pytorch_tanh"). */
  readonly gelu: 'erf' | 'tanh'
  /** Class names by label index. */
  readonly labels: readonly string[]
}

const geluForms: Readonly<Record<string, 'erf' | 'tanh'>> = { gelu: 'erf', gelu_new: 'tanh', gelu_pytorch_tanh: 'tanh', gelu_fast: 'tanh' }

/** Checks and normalizes a parsed config.json. */
export function parseEncoderConfig(raw: unknown, label: string): EncoderConfig {
  const bad = (why: string): never => {
    throw new ModelFormatError(`${label}: ${why}; flexpipe's elastic engine needs a BERT-style sequence classifier config (model_type "bert")`)
  }
  if (raw === null || typeof raw !== 'object') bad('not a JSON object')
  const c = raw as Record<string, unknown>
  const int = (key: string, fallback?: number): number => {
    const v = c[key] ?? fallback
    if (!Number.isSafeInteger(v) || (v as number) <= 0) bad(`${key} must be a positive integer, got ${JSON.stringify(c[key])}`)
    return v as number
  }
  if (c.model_type !== undefined && c.model_type !== 'bert') bad(`model_type ${JSON.stringify(c.model_type)} is not supported`)
  const hidden = int('hidden_size')
  const heads = int('num_attention_heads')
  const ffn = int('intermediate_size')
  if (hidden % heads !== 0) bad(`hidden_size ${hidden} is not a multiple of num_attention_heads ${heads}`)
  if (ffn % heads !== 0) bad(`intermediate_size ${ffn} is not a multiple of num_attention_heads ${heads} (one FFN slice per shard)`)
  const act = c.hidden_act ?? 'gelu'
  const gelu = typeof act === 'string' ? geluForms[act] : undefined
  if (gelu === undefined) bad(`hidden_act ${JSON.stringify(act)} is not supported (gelu, gelu_new)`)
  const eps = c.layer_norm_eps ?? 1e-12
  if (typeof eps !== 'number' || !(eps > 0)) bad(`layer_norm_eps must be a positive number, got ${JSON.stringify(eps)}`)
  const nLabels = int('num_labels', c.id2label && typeof c.id2label === 'object' ? Object.keys(c.id2label).length : 2)
  const id2label = (c.id2label ?? {}) as Record<string, unknown>
  const labels = Array.from({ length: nLabels }, (_, i) => {
    const v = id2label[String(i)]
    return typeof v === 'string' ? v : `LABEL_${i}`
  })
  return {
    hidden,
    layers: int('num_hidden_layers'),
    heads,
    headDim: hidden / heads,
    ffn,
    vocab: int('vocab_size'),
    maxPositions: int('max_position_embeddings', 512),
    typeVocab: int('type_vocab_size', 2),
    eps: eps as number,
    gelu: gelu!,
    labels,
  }
}

export async function readEncoderConfig(path: string): Promise<EncoderConfig> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new ModelFormatError(`cannot read ${path}: ${(err as Error).message}`, { cause: err })
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new ModelFormatError(`${path}: not JSON (${(err as Error).message})`)
  }
  return parseEncoderConfig(raw, path)
}

/** Rows of one shard: Q, K, V and Oᵀ head blocks (headDim each), FFN-in and FFN-outᵀ slices. */
export function shardRows(c: EncoderConfig): number {
  return 4 * c.headDim + 2 * (c.ffn / c.heads)
}

/** Weights in one shard (every row has `hidden` columns). */
export function shardWeights(c: EncoderConfig): number {
  return shardRows(c) * c.hidden
}
