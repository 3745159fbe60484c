// SPDX-License-Identifier: Apache-2.0
// The DequantizeLayer op: the m shards of a partial layer (FPQ1 blobs of mixed bitwidths and raw
// float32 shards) into the stacked weight matrices, shard j's row blocks at rows [j*r, (j+1)*r);
// malformed calls are errors, never crashes.
import t from 'tap'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { dequantizeReference } from '../../lib/package/quant-blob.js'
import { gaussianLayer, sameBits } from '../helpers/quant.js'

const b = binding()
const U8 = 2
const F32 = 1
const H = 64
const rows = [8, 8, 8, 8, 16, 16] // Q, K, V, Oᵀ, F1, F2ᵀ of one shard
const shardWeights = rows.reduce((a, r) => a + r, 0) * H
const shards = 4
const layer = gaussianLayer({ n: shards * shardWeights, seed: 5, std: 0.05, outliers: 40, ties: 0.2 })

function outputs(m: number): NativeTensor[] {
  return rows.map((r) => ({ dtype: F32, dims: [m * r, H], data: new Float32Array(m * r * H) }))
}

/** The shard streams of the reference layout: shard j's block b at rows [j*r_b, (j+1)*r_b) of output b. */
function expected(streams: Float32Array[]): Float32Array[] {
  const m = streams.length
  return rows.map((r, blk) => {
    const out = new Float32Array(m * r * H)
    const start = rows.slice(0, blk).reduce((a, x) => a + x, 0) * H
    streams.forEach((s, j) => out.set(s.subarray(start, start + r * H), j * r * H))
    return out
  })
}

t.test('mixed bitwidths and raw shards land in the stacked matrices', async (t) => {
  const bitsOf = [2, 5, 32, 8]
  const blobs = bitsOf.map((bits, j) =>
    bits === 32
      ? new Uint8Array(layer.buffer, j * shardWeights * 4, shardWeights * 4)
      : b.quantizeLayer(layer, shards, bits).blobs[j]!,
  )
  const streams = blobs.map((blob, j) => (bitsOf[j] === 32 ? layer.subarray(j * shardWeights, (j + 1) * shardWeights) : dequantizeReference(blob)))
  for (const threads of [1, 2]) {
    for (const m of [1, 3, 4]) {
      const outs = outputs(m)
      b.runOp('DequantizeLayer', blobs.slice(0, m).map((blob) => ({ dtype: U8, dims: [blob.length], data: blob })), outs, [m, ...bitsOf.slice(0, m)], [], threads)
      const want = expected(streams.slice(0, m))
      t.ok(outs.every((o, i) => sameBits(o.data as Float32Array, want[i]!)), `${m} shards, ${threads} threads: equals the reference decoder`)
    }
  }
})

t.test('malformed calls are errors', async (t) => {
  const blob = b.quantizeLayer(layer, shards, 4).blobs[0]!
  const input = (x: Uint8Array): NativeTensor => ({ dtype: U8, dims: [x.length], data: x })
  const bad = (what: string, ins: NativeTensor[], outs: NativeTensor[], ints: number[], re: RegExp): void => {
    t.throws(() => b.runOp('DequantizeLayer', ins, outs, ints, [], 2), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: re }, what)
  }
  bad('shard count and blobs disagree', [input(blob)], outputs(1), [2, 4, 4], /blobs and/)
  bad('bits not in 2..8 or 32', [input(blob)], outputs(1), [1, 9], /bits must be/)
  bad('bits of the blob differ', [input(blob)], outputs(1), [1, 3], /bits/)
  bad('truncated blob', [input(blob.subarray(0, blob.length - 64))], outputs(1), [1, 4], /bytes|holds|truncated|short/)
  bad('outputs of another shard size', [input(blob)], rows.map((r) => ({ dtype: F32, dims: [r, H / 2], data: new Float32Array((r * H) / 2) })), [1, 4], /weights/)
  const corrupt = blob.slice()
  corrupt[0] = 0x58
  bad('bad magic', [input(corrupt)], outputs(1), [1, 4], /magic|FPQ1/)
  bad('raw shard too short', [input(new Uint8Array(16))], outputs(1), [1, 32], /raw float32/)
})
