// SPDX-License-Identifier: Apache-2.0
// The graph of one elastic sub-model: the bottom `depth` layers with their first `width` shards, at
// one sequence length, as flexpipe IR that buildProgram turns into a native program.
//
// Every constant is an ExternalTensor whose `path` is 'arena' and whose `offset` is its arena offset
// (resident parameters, shard blobs in the preload or staging region, plan constants): the caller's
// `locate` decides where things are; buildProgram's constant slot just reads the offset back.
// Inputs: 'ids' int64 [S] (rows of the word-embedding table to gather), 'mask' float32 [S]
// (0 for tokens, -10000 for padding: additive over attention keys). Output: 'logits' [1, labels].
// Node names start with 'emb/', 'L<k>/' or 'head/': the layout (elastic-layout.ts) finds each layer's op
// range by them, for its load edges and the run's per-layer times.
import type { DType } from '../../model/dtype.js'
import type { ExternalTensor, Graph, Node } from '../../model/ir.js'
import type { EncoderConfig } from '../../model/encoder-config.js'

export interface SubmodelShape {
  readonly depth: number
  readonly width: number
  readonly seq: number
  /** Per layer k < depth, per shard j < width: the bitwidth of the version it runs with (32 = fp32). */
  readonly bits: ReadonlyArray<readonly number[]>
}

/** Where a constant is: called once per constant the graph uses. */
export type Locate = (name: string, dtype: DType, dims: readonly number[]) => ExternalTensor

/** Names of the resident tensors of layer l. */
export const residentLayerTensors = ['bq', 'bk', 'bv', 'bo', 'ln1g', 'ln1b', 'b1', 'b2', 'ln2g', 'ln2b'] as const

export const blobName = (layer: number, shard: number): string => `L${layer}.S${shard}`

export function buildSubmodelGraph(c: EncoderConfig, s: SubmodelShape, locate: Locate): Graph {
  const H = c.hidden
  const S = s.seq
  const nodes: Node[] = []
  const initializers = new Map<string, ExternalTensor>()
  // A constant view: `name` is the tensor, `as` the value name in the graph (slices differ in dims).
  const k = (name: string, dims: readonly number[], dtype: DType = 'float32', as = name): string => {
    if (!initializers.has(as)) initializers.set(as, locate(name, dtype, dims))
    return as
  }
  let n = 0
  const node = (scope: string, opType: string, inputs: string[], attrs: Record<string, number | number[] | string> = {}, outputs = 1, domain = ''): string[] => {
    const id = n++
    const outs = Array.from({ length: outputs }, (_, i) => `${scope}/${opType}${id}:${i}`)
    nodes.push({ name: `${scope}/${opType}${id}`, opType, domain, inputs, outputs: outs, attrs: new Map(Object.entries(attrs)) })
    return outs
  }
  const one = (scope: string, opType: string, inputs: string[], attrs: Record<string, number | number[] | string> = {}): string =>
    node(scope, opType, inputs, attrs)[0]!
  const ln = (scope: string, x: string, g: string, b: string): string => one(scope, 'LayerNormalization', [x, g, b], { axis: -1, epsilon: c.eps })

  // Embeddings: word rows + positions 0..S-1 + token type 0, LayerNorm.
  const word = one('emb', 'Gather', [k('emb.word', [c.vocab, H]), 'ids'], { axis: 0 })
  const pos = one('emb', 'Add', [word, k('emb.pos', [S, H], 'float32', `emb.pos[${S}]`)])
  const typed = one('emb', 'Add', [pos, k('emb.type', [H], 'float32', 'emb.type[0]')])
  let x = ln('emb', typed, k('emb.ln.g', [H]), k('emb.ln.b', [H]))

  const m = s.width
  const dh = c.headDim
  const f = c.ffn / c.heads
  for (let l = 0; l < s.depth; l++) {
    const sc = `L${l}`
    const blobs = Array.from({ length: m }, (_, j) => k(blobName(l, j), [-1], 'uint8'))
    const [wq, wk, wv, woT, w1, w2T] = node(sc, 'DequantizeLayer', blobs, { bits: s.bits[l]!.slice(), hidden: H, headDim: dh, ffnSlice: f }, 6, 'flexpipe') as [
      string, string, string, string, string, string,
    ]
    const bias = (t: string, width: number): string => k(`L${l}.${t}`, [width], 'float32', `L${l}.${t}[${width}]`)
    const q = one(sc, 'Gemm', [x, wq, bias('bq', m * dh)], { transB: 1 })
    const kk = one(sc, 'Gemm', [x, wk, bias('bk', m * dh)], { transB: 1 })
    const v = one(sc, 'Gemm', [x, wv, bias('bv', m * dh)], { transB: 1 })
    const ctx = node(sc, 'Attention', [q, kk, v, 'mask'], { heads: m }, 1, 'flexpipe')[0]!
    const ao = one(sc, 'Gemm', [ctx, woT, bias('bo', H)])
    const y = ln(sc, one(sc, 'Add', [ao, x]), bias('ln1g', H), bias('ln1b', H))
    const h = one(sc, 'Gemm', [y, w1, bias('b1', m * f)], { transB: 1 })
    const g = one(sc, 'Gelu', [h], { approximate: c.gelu === 'tanh' ? 'tanh' : 'none' })
    const o = one(sc, 'Gemm', [g, w2T, bias('b2', H)])
    x = ln(sc, one(sc, 'Add', [o, y]), bias('ln2g', H), bias('ln2b', H))
  }
  // Pooler on [CLS] (row 0), classifier.
  const cls = one('head', 'Gather', [x, k('head.cls', [1], 'int64')], { axis: 0 })
  const pooled = one('head', 'Tanh', [one('head', 'Gemm', [cls, k('pooler.w', [H, H]), k('pooler.b', [H])], { transB: 1 })])
  const logits = one('head', 'Gemm', [pooled, k('classifier.w', [c.labels.length, H]), k('classifier.b', [c.labels.length])], { transB: 1 })
  nodes.push({ name: 'head/out', opType: 'Identity', domain: '', inputs: [logits], outputs: ['logits'], attrs: new Map() })
  return {
    name: `elastic ${s.depth}x${s.width} seq ${S}`,
    opset: 21,
    nodes,
    inputs: [
      { name: 'ids', dtype: 'int64', dims: [S] },
      { name: 'mask', dtype: 'float32', dims: [S] },
    ],
    outputs: [{ name: 'logits', dtype: 'float32', dims: [1, c.labels.length] }],
    initializers,
  }
}
