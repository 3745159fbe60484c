// SPDX-License-Identifier: Apache-2.0
// decodeTensor keeps raw initializer bytes where they are (lib/model/tensor-proto.ts rawTensor): `bytes`
// is a view of the message, `data` an aligned copy made when first read; sizes are checked at once.
import t from 'tap'
import { ModelFormatError } from '../../lib/errors.js'
import { tensorBytes } from '../../lib/model/ir.js'
import { decodeTensor } from '../../lib/model/tensor-proto.js'

const values = Float32Array.from({ length: 12 }, (_, i) => i * 0.5 - 2)

t.test('raw bytes at an unaligned offset: a view until data is read, then an equal aligned array', async (t) => {
  const message = new Uint8Array(values.byteLength + 3)
  const raw = message.subarray(3)
  raw.set(new Uint8Array(values.buffer))
  const tensor = decodeTensor({ name: 'w', dataType: 1, dims: [3, 4], rawData: raw }, '.')
  t.ok('data' in tensor && tensor.bytes === raw, 'bytes is the message view itself')
  if (!('data' in tensor)) return
  t.equal(tensorBytes(tensor), raw)
  const data = tensor.data as Float32Array
  t.ok(data instanceof Float32Array && data.byteOffset % 4 === 0)
  t.same(Array.from(data), Array.from(values))
  t.equal(tensor.data, data, 'made once')
  t.same(Array.from({ ...tensor }.data as Float32Array), Array.from(values), 'a spread copy keeps the elements')
})

t.test('raw bytes that do not fit the dims are rejected when decoded', async (t) => {
  t.throws(() => decodeTensor({ name: 'w', dataType: 1, dims: [3, 5], rawData: new Uint8Array(values.buffer) }, '.'), ModelFormatError)
})

t.test('typed fields are decoded into data, and tensorBytes views them', async (t) => {
  const tensor = decodeTensor({ name: 'w', dataType: 1, dims: [2], floatData: [1.5, -2] }, '.')
  if (!('data' in tensor)) return t.fail('expected host data')
  t.equal(tensor.bytes, undefined)
  t.same(Array.from(new Float32Array(tensorBytes(tensor).slice().buffer)), [1.5, -2])
})
