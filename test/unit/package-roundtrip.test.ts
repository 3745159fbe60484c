// SPDX-License-Identifier: Apache-2.0
// Packages round-trip: blobs of odd sizes come back byte-exact, at 4096-aligned offsets, with their manifest.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { PackageReader } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'
import { decodeHeader } from '../../lib/package/format.js'

function pattern(n: number, seed: number): Uint8Array {
  const rand = seededRandom(seed)
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256)
  return b
}

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const sizes = [0, 1, 4095, 4096, 4097, (1 << 20) + 3, 17, 0, 8191]
const created = new Date('2025-01-02T03:04:05.000Z')

/** Checks every blob: aligned, padded, contiguous in write order, byte-exact, padding zero. */
async function checkBlobs(t: Test, path: string, want: Map<string, Uint8Array>): Promise<void> {
  const r = await PackageReader.open(path, { verify: 'all' })
  const file = readFileSync(path)
  t.equal(r.fileSize, file.length)
  t.equal(r.blobs.length, want.size)
  let prevEnd = 0
  for (const b of r.blobs) {
    t.equal(b.offset % 4096, 0, `${b.name} offset ${b.offset} is aligned`)
    t.equal(b.paddedLength, Math.ceil(b.length / 4096) * 4096, `${b.name} padded length`)
    t.ok(b.offset >= prevEnd, `${b.name} follows the previous blob`)
    prevEnd = b.offset + b.paddedLength
    const bytes = await r.readBlob(b.name)
    t.ok(Buffer.from(bytes).equals(Buffer.from(want.get(b.name)!)), `${b.name}: ${b.length} bytes read back exactly`)
    const whole = file.subarray(b.offset, b.offset + b.paddedLength) // an aligned whole-blob read, as O_DIRECT does
    t.ok(whole.subarray(0, b.length).equals(Buffer.from(want.get(b.name)!)), `${b.name}: bytes at its offset`)
    t.ok(whole.subarray(b.length).every((x) => x === 0), `${b.name}: padding is zero`)
  }
  t.equal(file.length, Math.max(prevEnd, file.length), 'no blob past the end')
  await r.close()
}

t.test('blobs of odd sizes round-trip byte-exactly at 4096-aligned offsets', async (t) => {
  const path = join(dir, 'sizes.fpk')
  const w = await PackageWriter.create(path, { producer: 'roundtrip test', created })
  const want = new Map<string, Uint8Array>()
  for (const [i, n] of sizes.entries()) {
    const bytes = pattern(n, i + 1)
    want.set(`blob${i}.n${n}`, bytes)
    await w.addBlob(`blob${i}.n${n}`, bytes)
  }
  const graph = { nodes: [{ op: 'Conv', name: 'conv1' }], note: 'unicode: µ→∑' }
  const manifest = await w.finish(graph, { model: 'test', budget: 100e6 })
  t.equal(manifest.blobs.length, sizes.length)
  await checkBlobs(t, path, want)
  const r = await PackageReader.open(path)
  t.same(r.manifest, { formatVersion: 1, producer: 'roundtrip test', created: created.toISOString(), graph, blobs: manifest.blobs, meta: { model: 'test', budget: 100e6 } })
  t.equal(r.header.manifestOffset, 4096)
  await r.close()
})

t.test('typed arrays of every kind are stored as their own bytes, with dtype, dims, kind and group', async (t) => {
  const path = join(dir, 'typed.fpk')
  const w = await PackageWriter.create(path, { producer: 'p' })
  const f32 = new Float32Array([1.5, -2, 3.25, 4, 5, 6, 7, 8]).subarray(1, 7) // a view with a byte offset
  const i64 = new BigInt64Array([1n, -2n, 3n])
  const buf = Buffer.from('hello package')
  const dv = new DataView(pattern(100, 9).buffer, 10, 33)
  await w.addBlob('conv1.w', f32, { dtype: 'float32', dims: [2, 3], kind: 'weight', group: 'layer 1' })
  await w.addBlob('ids', i64, { dtype: 'int64', dims: [3] })
  await w.addBlob('text', buf, { kind: 'lut' })
  await w.addBlob('dv', dv, { group: 'shard 2 @4bit' })
  await w.finish(null)
  const r = await PackageReader.open(path, { verify: 'all' })
  t.same(r.blob('conv1.w'), { ...r.blob('conv1.w'), dtype: 'float32', dims: [2, 3], kind: 'weight', group: 'layer 1', length: 24 })
  t.same(Array.from(new Float32Array((await r.readBlob('conv1.w')).buffer)), [-2, 3.25, 4, 5, 6, 7])
  t.same(Array.from(new BigInt64Array((await r.readBlob('ids')).buffer)), [1n, -2n, 3n])
  t.equal(Buffer.from(await r.readBlob('text')).toString(), 'hello package')
  t.same(await r.readBlob('dv'), new Uint8Array(dv.buffer, 10, 33))
  t.equal(r.blob('dv').group, 'shard 2 @4bit')
  t.notOk('dtype' in r.blob('dv'), 'absent fields stay absent')
  t.equal(r.manifest.graph, null)
  t.same(r.manifest.meta, {})
  t.ok(r.has('ids'))
  t.notOk(r.has('nope'))
  await r.close()
})

t.test('blobs added without awaiting each one land in call order', async (t) => {
  const path = join(dir, 'concurrent.fpk')
  const w = await PackageWriter.create(path, { producer: 'p' })
  const want = new Map<string, Uint8Array>()
  const adds: Promise<void>[] = []
  for (let i = 0; i < 20; i++) {
    const bytes = pattern(1000 * i + 1, 100 + i)
    want.set(`b${i}`, bytes)
    adds.push(w.addBlob(`b${i}`, bytes))
  }
  await Promise.all(adds)
  const m = await w.finish({})
  t.same(m.blobs.map((b) => b.name), [...want.keys()])
  await checkBlobs(t, path, want)
})

t.test('a manifest larger than the reserved gap moves the blobs up and still precedes them', async (t) => {
  for (const reserve of [0, 5000]) {
    const path = join(dir, `moved-${reserve}.fpk`)
    const w = await PackageWriter.create(path, { producer: 'p', manifestReserve: reserve })
    const want = new Map<string, Uint8Array>()
    for (const [i, n] of [4097, (9 << 20) + 7, 0, 3].entries()) {
      // the 9 MiB blob makes the move take more than one chunk
      want.set(`w${i}`, pattern(n, 50 + i))
      await w.addBlob(`w${i}`, want.get(`w${i}`)!)
    }
    const graph = { big: 'x'.repeat(200_000) }
    const m = await w.finish(graph)
    await checkBlobs(t, path, want)
    const header = decodeHeader(readFileSync(path).subarray(0, 4096))
    t.equal(m.blobs[0]!.offset, Math.ceil((4096 + header.manifestLength) / 4096) * 4096, `reserve ${reserve}: first blob right after the manifest`)
    const r = await PackageReader.open(path)
    t.same(r.manifest.graph, graph)
    t.same(r.blobs, m.blobs, 'finish() returns the final offsets')
    await r.close()
  }
})

t.test('a package without blobs is valid', async (t) => {
  const path = join(dir, 'empty.fpk')
  const w = await PackageWriter.create(path, { producer: 'p', manifestReserve: 0 })
  await w.finish({ nodes: [] }, { why: 'empty' })
  const r = await PackageReader.open(path, { verify: 'all' })
  t.same(r.blobs, [])
  t.same(r.manifest.meta, { why: 'empty' })
  t.equal(statSync(path).size % 4096, 0, 'the file is a whole number of 4096-byte blocks')
  await r.close()
})
