// SPDX-License-Identifier: Apache-2.0
// The server example's request decoding (examples/server/codec.ts): a raw body is read in place when it
// is aligned for the input's type and copied when not, with the same values either way; int64 JSON
// inputs become BigInts, unsafe integers are refused; outputs encode int64 beyond 2^53 as strings.
import t from 'tap'
import { tensor } from 'flexpipe'
import { BadRequest, decodeJson, decodeRaw, encodeOutputs } from '../../examples/server/codec.js'

const f32 = [{ name: 'x', dtype: 'float32' as const, dims: [1, 3] }]

t.test('a raw body, aligned or not, gives the same float32 values', async (t) => {
  const values = new Float32Array([1.5, -2.25, 3e-3])
  const aligned = Buffer.from(values.buffer)
  const inPlace = decodeRaw(f32, aligned, undefined).x!
  t.same(Array.from(inPlace.data as Float32Array), Array.from(values))
  t.equal((inPlace.data as Float32Array).buffer, aligned.buffer, 'an aligned body is read in place')
  const shifted = Buffer.alloc(13)
  aligned.copy(shifted, 1)
  const copied = decodeRaw(f32, shifted.subarray(1), undefined).x!
  t.same(Array.from(copied.data as Float32Array), Array.from(values), 'an unaligned body is copied')
  t.not((copied.data as Float32Array).buffer, shifted.buffer)
  t.throws(() => decodeRaw(f32, Buffer.alloc(8), undefined), BadRequest)
  const symbolic = [{ name: 'x', dtype: 'float32' as const, dims: ['batch', 3] }]
  t.throws(() => decodeRaw(symbolic, Buffer.alloc(12), '1000000000000,3'), /need 12000000000000 bytes, got 12/, 'absurd dims are refused before any allocation')
})

t.test('int64 inputs from JSON; outputs back to JSON', async (t) => {
  const ids = [{ name: 'ids', dtype: 'int64' as const, dims: ['batch', 'seq'] }]
  const feeds = decodeJson(ids, { inputs: { ids: { dims: [1, 3], data: [101, 7, 2 ** 40] } } })
  t.same(Array.from(feeds.ids!.data as BigInt64Array), [101n, 7n, 2n ** 40n])
  t.throws(() => decodeJson(ids, { inputs: { ids: { dims: [1, 1], data: [1.5] } } }), /takes integers/)
  t.throws(() => decodeJson(ids, { inputs: { ids: { dims: [1, 1], data: [2 ** 60] } } }), /takes integers/)
  const out = encodeOutputs({ y: tensor('int64', [2], new BigInt64Array([5n, 2n ** 60n])) })
  t.same(out.y, { dtype: 'int64', dims: [2], data: [5, (2n ** 60n).toString()] })
})
