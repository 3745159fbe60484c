// SPDX-License-Identifier: Apache-2.0
// The two 'flexpipe' operators of an elastic sub-model graph (lib/plan/elastic/submodel-graph.ts).
//
//   flexpipe.DequantizeLayer(blob_0, ..., blob_{m-1}) -> Wq, Wk, Wv, Woᵀ, W1, W2ᵀ
//     attrs: bits (one per blob: 2..8 = FPQ1 blob, 32 = raw float32 rows), hidden, headDim, ffnSlice.
//     Blob j is shard j of the sub-layer; its six row blocks land at rows [j*r, (j+1)*r) of the six
//     outputs (r = headDim for the first four, ffnSlice for the last two): native op DequantizeLayer.
//   flexpipe.Attention(Q, K, V, mask) -> O: per-head softmax(Q Kᵀ / sqrt(dh) + mask) V over the
//     `heads` heads packed in Q's width; mask is additive over keys ([S]).
import { attrInt, attrInts } from '../attrs.js'
import { info, type OpDef } from './op-def.js'
import { attentionKernelCall } from './nn-attention.js'
import { input, shapeError } from './op-util.js'

const dequantizeLayer: OpDef = {
  opType: 'DequantizeLayer',
  infer(ctx) {
    const bits = attrInts(ctx.node, 'bits', [])
    const hidden = attrInt(ctx.node, 'hidden', 0)
    const dh = attrInt(ctx.node, 'headDim', 0)
    const f = attrInt(ctx.node, 'ffnSlice', 0)
    const m = ctx.node.inputs.length
    if (bits.length !== m || m === 0) throw shapeError(ctx, `needs one bitwidth per blob (${m} blobs, ${bits.length} bitwidths)`)
    ctx.inputs.forEach((_, j) => {
      if (input(ctx, j).dtype !== 'uint8') throw shapeError(ctx, `blob ${j} must be uint8`)
    })
    const rows = [dh, dh, dh, dh, f, f]
    return {
      outputs: rows.map((r) => info('float32', [m * r, hidden])),
      kernel: () => ({ op: 'DequantizeLayer', inputs: ctx.node.inputs.map((_, j) => j), ints: [m, ...bits], floats: [] }),
    }
  },
}

const attention: OpDef = {
  opType: 'Attention',
  infer(ctx) {
    const q = input(ctx, 0)
    const heads = attrInt(ctx.node, 'heads', 0)
    const width = q.dims[1] as number
    if (q.dims.length !== 2 || heads < 1 || width % heads !== 0) throw shapeError(ctx, `Q must be [S, heads*dh] (heads ${heads})`)
    const seq = q.dims[0] as number
    return {
      outputs: [info('float32', q.dims)],
      kernel: () => attentionKernelCall({ q: 0, k: 1, v: 2, mask: ctx.node.inputs[3] ? 3 : undefined, heads, dh: width / heads, seqKv: seq }),
    }
  },
}

/** The internal operators by `domain.opType`, for inferGraph's `internalOps`. */
export const elasticOps: ReadonlyMap<string, OpDef> = new Map([
  ['flexpipe.DequantizeLayer', dequantizeLayer],
  ['flexpipe.Attention', attention],
])
