// SPDX-License-Identifier: Apache-2.0
// The runtime's load path: the native Session's readFile reads package blobs at their aligned offsets byte-exactly.
import { mkdtempSync, rmSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { binding } from '../../lib/native/binding.js'
import { PackageReader } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const sizes = [1, 4095, 4096, 4097, (1 << 20) + 3, 0, 12345]
const data = sizes.map((n, i) => {
  const rand = seededRandom(1000 + i)
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256))
})

for (const io of ['uring', 'pread'] as const) {
  t.test(`readFile through ${io} loads whole padded blobs at their offsets byte-exactly`, async (t) => {
    const path = join(dir, `native-${io}.fpk`)
    const w = await PackageWriter.create(path, { producer: 'native test' })
    for (const [i, bytes] of data.entries()) await w.addBlob(`blob${i}`, bytes, { kind: 'weight' })
    await w.finish({})
    const r = await PackageReader.open(path, { verify: 'all' })
    const { Session } = binding()
    const s = new Session(2, io)
    t.comment(`reader: ${s.stats().reader}`)
    // one aligned range per blob: file offset and length are multiples of 4096, as O_DIRECT needs
    const loads = r.blobs.filter((b) => b.paddedLength > 0)
    const arenaAt = new Map<string, number>()
    let arenaBytes = 0
    for (const b of loads) {
      arenaAt.set(b.name, arenaBytes)
      arenaBytes += b.paddedLength
    }
    s.resize(arenaBytes, 0)
    await s.readFile(path, new Float64Array(loads.flatMap((b) => [b.offset, b.paddedLength, arenaAt.get(b.name)!])))
    for (const b of loads) {
      t.equal(b.offset % 4096, 0, `${b.name} offset aligned`)
      t.equal(b.paddedLength % 4096, 0, `${b.name} length aligned`)
      const got = new Uint8Array(b.paddedLength)
      s.read(arenaAt.get(b.name)!, got)
      const want = await r.readBlob(b.name)
      t.ok(Buffer.from(got.subarray(0, b.length)).equals(Buffer.from(want)), `${b.name}: ${b.length} bytes equal`)
      t.ok(got.subarray(b.length).every((x) => x === 0), `${b.name}: padding is zero`)
    }
    // a package shrunk under a running engine: the native read fails with an IO error, no crash
    const last = loads[loads.length - 1]!
    truncateSync(path, last.offset + 10)
    await t.rejects(s.readFile(path, new Float64Array([last.offset, last.paddedLength, 0])), { code: 'ERR_FLEXPIPE_IO', message: /past its end/ })
    s.dispose()
    await r.close()
  })
}
