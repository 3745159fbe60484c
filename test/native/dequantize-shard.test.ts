// SPDX-License-Identifier: Apache-2.0
// The DequantizeShard op: a shard's six row blocks from an FPQ1 blob or a raw float32 shard, through runOp
// and through a Session program; malformed blobs (truncated, bad magic, wrong bits, reserved words, too
// many outliers, descending / repeated / out-of-range outlier indices, count mismatch) give
// ERR_FLEXPIPE_INVALID_ARGUMENT, never a crash, and the TypeScript parser rejects the same blobs.
import t from 'tap'
import { binding, type NativeTensor } from '../../lib/native/binding.js'
import { dequantizeReference, parseQuantBlobHeader, quantBlobBytes } from '../../lib/package/quant-blob.js'
import { dequantizeShardKernelCall } from '../../lib/model/ops/quant-dequantize.js'
import { seededRandom } from '../../lib/cli/inputs.js'
import { dequantizeNative, gaussianLayer, sameBits } from '../helpers/quant.js'
import { opCode, program } from '../helpers/program.js'

const b = binding()
const U8 = 2
const F32 = 1
// A shard of the spec's encoder: Q, K, V, O^T (32 rows each), FFN-in, FFN-out^T (128 rows), 256 columns.
const blocks = [32, 32, 32, 32, 128, 128].map((rows) => [rows, 256])
const shardWeights = 384 * 256

const layer = gaussianLayer({ n: 4 * shardWeights, seed: 42, std: 0.04, outliers: 60, ties: 0.4 })
const quantized = new Map<number, Uint8Array[]>()
const blobOf = (bits: number, shard = 1): Uint8Array => {
  if (!quantized.has(bits)) quantized.set(bits, b.quantizeLayer(layer, 4, bits).blobs)
  return quantized.get(bits)![shard]!
}

function run(blob: Uint8Array, bits: number, outputs: NativeTensor[], ints: number[] = [bits]): void {
  b.runOp('DequantizeShard', [{ dtype: U8, dims: [blob.length], data: blob }], outputs, ints, [], 2)
}

const blockOutputs = (): { outputs: NativeTensor[]; all: Float32Array } => {
  const all = new Float32Array(shardWeights)
  let at = 0
  const outputs = blocks.map((dims) => {
    const n = dims[0]! * dims[1]!
    const data = all.subarray(at, at + n)
    at += n
    return { dtype: F32, dims, data }
  })
  return { outputs, all }
}

t.test('DequantizeShard fills the six row blocks in order, for bits 2..8 and 32', async (t) => {
  for (let bits = 2; bits <= 8; bits++) {
    const blob = blobOf(bits)
    const { outputs, all } = blockOutputs()
    run(blob, bits, outputs)
    t.ok(sameBits(all, dequantizeReference(blob)), `bits ${bits}: equals the TS reference decoder`)
  }
  const raw = new Uint8Array(layer.buffer, 4 * shardWeights, 4 * shardWeights)
  const { outputs, all } = blockOutputs()
  run(raw, 32, outputs)
  t.ok(sameBits(all, layer.subarray(shardWeights, 2 * shardWeights)), 'bits 32: the raw float32 shard, copied')
  const big = new Float32Array(4 * shardWeights)
  b.runOp('DequantizeShard', [{ dtype: U8, dims: [layer.byteLength], data: new Uint8Array(layer.buffer) }], [{ dtype: F32, dims: [4, 384, 256], data: big }], [32], [], 2)
  t.ok(sameBits(big, layer), 'bits 32 over 128Ki weights (threaded)')
})

t.test('a blob in a larger slot and at an odd byte offset is accepted', async (t) => {
  const blob = blobOf(3)
  const slot = new Uint8Array(blob.length + 4096 + 1).subarray(1)
  slot.set(blob)
  t.ok(sameBits(dequantizeNative(slot, 3, [shardWeights]), dequantizeReference(blob)))
})

/** A copy of the blob with `edit` applied to a DataView of it. */
function edited(blob: Uint8Array, edit: (v: DataView, h: ReturnType<typeof parseQuantBlobHeader>) => void): Uint8Array {
  const copy = blob.slice()
  edit(new DataView(copy.buffer), parseQuantBlobHeader(blob))
  return copy
}

t.test('malformed blobs are rejected by the op and by the TS parser, with a reason', async (t) => {
  const blob = blobOf(4)
  const h = parseQuantBlobHeader(blob)
  t.ok(h.outliers >= 3, `the shard has outliers to corrupt (${h.outliers})`)
  const indexAt = (j: number): number => 32 + 4 * 16 + 4 * j
  const cases: Array<[string, Uint8Array, RegExp, number?]> = [
    ['empty', new Uint8Array(0), /shorter than its 32-byte header/],
    ['header only, cut', blob.subarray(0, 31), /shorter than its 32-byte header/],
    ['cut inside the centroids', blob.subarray(0, 40), /truncated/],
    ['cut inside the packed indices', blob.subarray(0, blob.length - 100), /truncated/],
    ['one padding word short', blob.subarray(0, blob.length - 4), /truncated/],
    ['bad magic', edited(blob, (v) => v.setUint8(3, 0x32)), /bad magic/],
    ['bits field 9', edited(blob, (v) => v.setUint32(4, 9, true)), /bits must be 2..8/],
    ['bits field 1', edited(blob, (v) => v.setUint32(4, 1, true)), /bits must be 2..8/],
    ['blob bits differ from the op', blob, /bits do not match/, 5],
    ['reserved word set', edited(blob, (v) => v.setUint32(28, 1, true)), /reserved word 3/],
    ['more outliers than weights', edited(blob, (v) => v.setUint32(12, 0xffffffff, true)), /more outliers than weights/],
    ['outlier count past the blob', edited(blob, (v) => v.setUint32(12, h.outliers + 5000, true)), /truncated/],
    ['count past the blob', edited(blob, (v) => v.setUint32(8, 0xffffffff, true)), /truncated/],
    ['descending outlier indices', edited(blob, (v) => { v.setUint32(indexAt(0), h.outlierIndex[1]!, true); v.setUint32(indexAt(1), h.outlierIndex[0]!, true) }), /not strictly ascending/],
    ['repeated outlier index', edited(blob, (v) => v.setUint32(indexAt(1), h.outlierIndex[0]!, true)), /not strictly ascending/],
    ['outlier index = count', edited(blob, (v) => v.setUint32(indexAt(h.outliers - 1), shardWeights, true)), /out of range/],
    ['outlier index huge', edited(blob, (v) => v.setUint32(indexAt(0), 0xfffffff0, true)), /out of range/],
  ]
  for (const [what, bad, reason, opBits] of cases) {
    t.throws(() => run(bad, opBits ?? 4, blockOutputs().outputs), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: reason }, `op: ${what}`)
    if (opBits === undefined) t.throws(() => parseQuantBlobHeader(bad), { code: 'ERR_FLEXPIPE_PACKAGE', message: reason }, `parser: ${what}`)
  }
  t.throws(() => run(blob, 4, [{ dtype: F32, dims: [shardWeights - 1], data: new Float32Array(shardWeights - 1) }]), { message: /holds 98304 weights, the outputs 98303/ }, 'count differs from the outputs')
})

t.test('DequantizeShard checks its tensors and attributes', async (t) => {
  const blob = blobOf(2)
  const out = (): NativeTensor[] => [{ dtype: F32, dims: [shardWeights], data: new Float32Array(shardWeights) }]
  const inv = { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT' }
  t.throws(() => run(blob, 2, out(), []), { ...inv, message: /int attributes/ }, 'no bits')
  for (const bits of [0, 1, 9, 16, 33]) t.throws(() => run(blob, bits, out()), { ...inv, message: /bits must be 2..8 or 32/ }, `bits ${bits}`)
  t.throws(() => b.runOp('DequantizeShard', [{ dtype: F32, dims: [blob.length / 4], data: new Float32Array(blob.buffer.slice(0)) }], out(), [2], []), { ...inv, message: /blob must be uint8/ }, 'float blob')
  t.throws(() => b.runOp('DequantizeShard', [{ dtype: U8, dims: [2, blob.length / 2], data: blob }], out(), [2], []), { ...inv, message: /1-D uint8/ }, 'rank-2 blob')
  t.throws(() => run(blob, 2, [{ dtype: 6, dims: [shardWeights], data: new Int32Array(shardWeights) }]), { ...inv, message: /every output must be float32/ }, 'int32 output')
  t.throws(() => b.runOp('DequantizeShard', [], out(), [2], []), { ...inv, message: /expected 1..1 inputs/ }, 'no input')
  t.throws(() => run(new Uint8Array(4 * shardWeights - 4), 32, out()), { ...inv, message: /raw float32 blob of 393212 bytes cannot fill 98304/ }, 'short raw shard')
})

t.test('random corruption: the op accepts exactly what the TS parser accepts, and decodes alike', async (t) => {
  const rand = seededRandom(9)
  const blob = blobOf(5, 2)
  const h = parseQuantBlobHeader(blob)
  const headerAndTables = h.packedOffset
  let accepted = 0
  let rejected = 0
  let disagreements = 0
  for (let iter = 0; iter < 400; iter++) {
    const bad = blob.slice(0, iter % 10 === 0 ? Math.floor(rand() * blob.length) : blob.length)
    for (let f = 0; f < 1 + Math.floor(rand() * 3); f++) {
      const at = Math.floor(rand() * Math.min(bad.length, headerAndTables + 64))
      if (at < bad.length) bad[at] = bad[at]! ^ (1 << Math.floor(rand() * 8))
    }
    let tsOk = true
    let count = -1
    try {
      count = parseQuantBlobHeader(bad).count
    } catch {
      tsOk = false
    }
    const n = tsOk ? count : shardWeights
    const got = new Float32Array(n)
    let opOk = true
    try {
      run(bad, 5, [{ dtype: F32, dims: [n], data: got }])
    } catch (err) {
      opOk = false
      if ((err as { code?: string }).code !== 'ERR_FLEXPIPE_INVALID_ARGUMENT') disagreements++
    }
    const bitsOk = tsOk && parseQuantBlobHeader(bad).bits === 5
    if (opOk !== bitsOk || (opOk && !sameBits(got, dequantizeReference(bad)))) disagreements++
    opOk ? accepted++ : rejected++
  }
  t.comment(`${accepted} corrupted blobs accepted (value bits flipped), ${rejected} rejected`)
  t.ok(accepted > 0 && rejected > 0, 'both outcomes occur')
  t.equal(disagreements, 0, 'the op and the TS parser agree on every corrupted blob')
})

t.test('DequantizeShard runs inside a Session program (blob persistent, blocks in the activations)', async (t) => {
  const blob = blobOf(6, 3)
  t.same(dequantizeShardKernelCall({ blob: 0, bits: 6, outputs: 6 }), { op: 'DequantizeShard', inputs: [0], ints: [6], floats: [], outputs: 6 })
  const call = dequantizeShardKernelCall({ blob: 0, bits: 6, outputs: 6 })
  const blobBytes = Math.ceil(blob.length / 64) * 64
  const tensors = [[0, 0, U8, blob.length]]
  let offset = 0
  for (const [rows, cols] of blocks) {
    tensors.push([1, offset, F32, rows!, cols!])
    offset += rows! * cols! * 4
  }
  const desc = program(tensors, [[opCode(call.op), 1, 6, 1, 0, 0, 1, 2, 3, 4, 5, 6, ...call.ints]])
  const s = new b.Session(2, 'auto')
  t.teardown(() => s.dispose())
  s.resize(blobBytes + offset + 4096, 0)
  s.write(0, blob)
  const id = s.addProgram(desc)
  const outs = blocks.map(([rows, cols]) => new Float32Array(rows! * cols!))
  await s.run(id, blobBytes, [], outs.map((o, i) => [i + 1, o] as [number, Float32Array]))
  const all = new Float32Array(shardWeights)
  let at = 0
  for (const o of outs) {
    all.set(o, at)
    at += o.length
  }
  t.ok(sameBits(all, dequantizeReference(blob)), 'the program output equals the TS reference decoder')
  t.equal(blob.length, quantBlobBytes(shardWeights, 6, parseQuantBlobHeader(blob).outliers))
})
