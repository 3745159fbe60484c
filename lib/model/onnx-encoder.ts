// SPDX-License-Identifier: Apache-2.0
// Imports an elastic encoder from its ONNX export instead of config.json + model.safetensors.
//
// What it reads from the graph (loadOnnx; external data resolved, float16 widened):
//   weights     the initializers by their Hugging Face names ('bert.encoder.layer.0.attention.self.
//               query.weight', ...), as scripts/fixtures/train_encoder.py exports them and as any export
//               that keeps parameter names does; extractEncoderWeights checks every shape
//   sizes       vocab and hidden from the word embeddings, positions and token types from theirs,
//               layers from the layer indices present, FFN width from layer 0's intermediate weight,
//               labels from the classifier's rows
//   heads       the Reshape that splits layer 0's query projection into heads: its constant shape
//               ends in [heads, headDim] with heads x headDim = hidden
//   eps / GELU  the first LayerNormalization's epsilon; 'erf' when the graph has an Erf node
//               (BERT's exact GELU), otherwise the tanh form
// Label names are not in an ONNX file: they come from a config.json beside it when there is one
// (id2label), otherwise LABEL_i.
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ModelFormatError } from '../errors.js'
import { halfToFloat } from './half.js'
import type { Graph, Node, TensorData } from './ir.js'
import { isExternal } from './ir.js'
import { loadOnnx } from './onnx-import.js'
import { readExternal } from './constant-data.js'
import { parseEncoderConfig, type EncoderConfig } from './encoder-config.js'
import type { SafeTensor } from './safetensors.js'

export interface OnnxEncoder {
  readonly config: EncoderConfig
  /** The config in Hugging Face's config.json form (what the package stores). */
  readonly rawConfig: Record<string, unknown>
  readonly tensors: Map<string, SafeTensor>
}

function floatTensor(t: TensorData, name: string, label: string): SafeTensor {
  if (t.dtype === 'float32') return { dims: t.dims, data: t.data as Float32Array, stored: 'F32' }
  if (t.dtype === 'float16') return { dims: t.dims, data: halfToFloat(t.data as Uint16Array), stored: 'F16' }
  throw new ModelFormatError(`${label}: initializer '${name}' is ${t.dtype}; the elastic encoder needs float32 or float16 weights`)
}

/** The constant a node input names: an initializer or a Constant node's value. */
function constantOf(g: Graph, name: string): TensorData | undefined {
  const init = g.initializers.get(name)
  if (init !== undefined) return isExternal(init) ? readExternal(init) : init
  const node = g.nodes.find((n) => n.opType === 'Constant' && n.outputs[0] === name)
  const v = node?.attrs.get('value')
  return v !== undefined && typeof v === 'object' && !Array.isArray(v) ? (v as TensorData) : undefined
}

/** Heads from the Reshape of layer 0's query projection (following Casts/Adds it may pass through). */
function headsOf(g: Graph, prefix: string, hidden: number, label: string): number {
  const weight = `${prefix}encoder.layer.0.attention.self.query.weight`
  const users = (value: string): Node[] => g.nodes.filter((n) => n.inputs.includes(value))
  // The projection's node reads the weight (perhaps through a Cast); walk forward a few nodes.
  let frontier = users(weight).flatMap((n) => (n.opType === 'Cast' ? users(n.outputs[0]!) : [n]))
  for (let hop = 0; hop < 4 && frontier.length > 0; hop++) {
    for (const n of frontier) {
      if (n.opType !== 'Reshape') continue
      const shape = constantOf(g, n.inputs[1] ?? '')
      const v = shape === undefined ? [] : Array.from(shape.data as ArrayLike<number | bigint>, Number)
      const heads = v[v.length - 2]
      const dh = v[v.length - 1]
      if (heads !== undefined && dh !== undefined && heads > 0 && heads * dh === hidden) return heads
    }
    frontier = frontier.flatMap((n) => users(n.outputs[0]!))
  }
  throw new ModelFormatError(`${label}: cannot find the number of attention heads (no Reshape of layer 0's query projection into [heads, headDim]); prepare from the Hugging Face folder (config.json + model.safetensors) instead`)
}

/** The shortest decimal that is the same float32 (ONNX attributes are float32: 1e-12 reads 9.99999996e-13). */
function shortestFloat32(x: number): number {
  for (let p = 1; p < 10; p++) {
    const d = Number(x.toPrecision(p))
    if (Math.fround(d) === Math.fround(x)) return d
  }
  return x
}

/** Reads an encoder classifier from an ONNX file (see the header). */
export async function readOnnxEncoder(path: string): Promise<OnnxEncoder> {
  const g = await loadOnnx(path)
  const tensors = new Map<string, SafeTensor>()
  for (const [name, t] of g.initializers) {
    if (!/(embeddings|encoder\.layer|pooler|classifier)\./.test(name) || !name.endsWith('weight') && !name.endsWith('bias')) continue
    tensors.set(name, floatTensor(isExternal(t) ? readExternal(t) : t, name, path))
  }
  const prefix = tensors.has('bert.embeddings.word_embeddings.weight') ? 'bert.' : ''
  const need = (name: string): SafeTensor => {
    const t = tensors.get(name)
    if (t === undefined) throw new ModelFormatError(`${path}: initializer '${name}' is missing; the ONNX import needs Hugging Face parameter names (export with the names kept, or prepare from the Hugging Face folder)`)
    return t
  }
  const word = need(`${prefix}embeddings.word_embeddings.weight`)
  const [vocab, hidden] = word.dims as [number, number]
  const layers = new Set([...tensors.keys()].map((n) => /encoder\.layer\.(\d+)\./.exec(n)?.[1]).filter((x) => x !== undefined).map(Number))
  const ln = g.nodes.find((n) => n.opType === 'LayerNormalization')
  const eps = ln?.attrs.get('epsilon')
  let id2label: Record<string, string> | undefined
  try {
    const beside = JSON.parse(await readFile(join(dirname(path), 'config.json'), 'utf8')) as { id2label?: Record<string, string> }
    id2label = beside.id2label
  } catch {
    id2label = undefined // no config.json beside the model: LABEL_i
  }
  const nLabels = need('classifier.weight').dims[0]!
  const rawConfig: Record<string, unknown> = {
    model_type: 'bert',
    architectures: ['BertForSequenceClassification'],
    vocab_size: vocab,
    hidden_size: hidden,
    num_hidden_layers: layers.size,
    num_attention_heads: headsOf(g, prefix, hidden, path),
    intermediate_size: need(`${prefix}encoder.layer.0.intermediate.dense.weight`).dims[0],
    max_position_embeddings: need(`${prefix}embeddings.position_embeddings.weight`).dims[0],
    type_vocab_size: need(`${prefix}embeddings.token_type_embeddings.weight`).dims[0],
    layer_norm_eps: typeof eps === 'number' ? shortestFloat32(eps) : 1e-12,
    hidden_act: g.nodes.some((n) => n.opType === 'Erf') ? 'gelu' : 'gelu_new',
    num_labels: nLabels,
    id2label: Object.fromEntries(Array.from({ length: nLabels }, (_, i) => [String(i), id2label?.[String(i)] ?? `LABEL_${i}`])),
    imported_from: 'onnx',
  }
  if ([...layers].some((l) => l >= layers.size)) throw new ModelFormatError(`${path}: encoder layer indices ${[...layers].sort((a, b) => a - b).join(', ')} are not 0..${layers.size - 1}`)
  return { config: parseEncoderConfig(rawConfig, path), rawConfig, tensors }
}
