// SPDX-License-Identifier: Apache-2.0
// The package format's building blocks: CRC-32 (node:zlib and the table fallback agree) and the header codec.
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { crc32, crc32Source, crc32Table } from '../../lib/package/crc32.js'
import { decodeHeader, encodeHeader, formatVersion, headerBytes, headerField, padToBlob } from '../../lib/package/format.js'

function randomBytes(n: number, seed: number): Uint8Array {
  const rand = seededRandom(seed)
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256)
  return b
}

t.test('crc32 gives the standard check value and says which implementation it uses', async (t) => {
  t.comment(`crc32 implementation: ${crc32Source}`)
  t.match(crc32Source, /^(node:zlib|table)$/)
  const check = new TextEncoder().encode('123456789')
  t.equal(crc32(check), 0xcbf43926)
  t.equal(crc32Table(check), 0xcbf43926)
  t.equal(crc32(new Uint8Array(0)), 0)
  t.equal(crc32Table(new Uint8Array(0)), 0)
})

t.test('the table fallback equals crc32 on random data, whole and in chunks', async (t) => {
  for (const [n, seed] of [[1, 1], [7, 2], [4096, 3], [100003, 4]] as const) {
    const data = randomBytes(n, seed)
    const whole = crc32(data)
    t.equal(crc32Table(data), whole, `n=${n} seed=${seed}`)
    const cut = Math.floor(n / 3)
    t.equal(crc32Table(data.subarray(cut), crc32Table(data.subarray(0, cut))), whole, `chunked table n=${n}`)
    t.equal(crc32(data.subarray(cut), crc32(data.subarray(0, cut))), whole, `chunked crc32 n=${n}`)
  }
})

t.test('the header encodes every field at its documented offset and decodes back', async (t) => {
  const h = encodeHeader({ manifestLength: 12345, manifestCrc: 0xdeadbeef }, crc32)
  t.equal(h.length, headerBytes)
  t.equal(Buffer.from(h.subarray(0, 8)).toString('latin1'), 'FLEXPIPE')
  const view = new DataView(h.buffer)
  t.equal(view.getUint32(headerField.version, true), formatVersion)
  t.equal(view.getUint32(headerField.flags, true), 0)
  t.equal(view.getBigUint64(headerField.manifestOffset, true), 4096n)
  t.equal(view.getBigUint64(headerField.manifestLength, true), 12345n)
  t.equal(view.getUint32(headerField.manifestCrc, true), 0xdeadbeef)
  t.equal(view.getUint32(headerField.headerCrc, true), crc32(h.subarray(0, 36)))
  t.ok(h.subarray(40).every((b) => b === 0), 'reserved bytes are zero')
  t.same(decodeHeader(h), {
    magic: 'FLEXPIPE',
    version: formatVersion,
    flags: 0,
    manifestOffset: 4096,
    manifestLength: 12345,
    manifestCrc: 0xdeadbeef,
    headerCrc: crc32(h.subarray(0, 36)),
  })
  view.setBigUint64(headerField.manifestLength, 1n << 60n, true)
  t.equal(decodeHeader(h).manifestLength, Infinity, 'u64 values past 2^53 decode as Infinity')
})

t.test('padToBlob rounds up to the blob alignment, 4096', async (t) => {
  t.same([0, 1, 4095, 4096, 4097].map((n) => padToBlob(n)), [0, 4096, 4096, 4096, 8192])
})
