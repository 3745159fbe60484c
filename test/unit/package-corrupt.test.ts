// SPDX-License-Identifier: Apache-2.0
// Corrupt, truncated and other-version packages are rejected with a PackageError naming what is wrong.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { PackageError } from '../../lib/errors.js'
import { crc32 } from '../../lib/package/crc32.js'
import { decodeHeader, encodeHeader, headerField } from '../../lib/package/format.js'
import { PackageReader, type VerifyLevel } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const base = join(dir, 'base.fpk')
const w = await PackageWriter.create(base, { producer: 'corrupt test', manifestReserve: 8192 })
await w.addBlob('embed.w', new Uint8Array(5000).fill(3), { dtype: 'float32', dims: [1250], kind: 'weight' })
await w.addBlob('layer3.w', new Uint8Array(3 * 4096 + 17).fill(5), { kind: 'weight', group: 'layer 3' })
await w.addBlob('layer3.b', new Uint8Array(40).fill(7))
await w.addBlob('head.w', new Uint8Array(9000).fill(9))
const good = await w.finish({ nodes: ['a', 'b'] }, { note: 'base' })
const original = readFileSync(base)
const entry = (name: string) => good.blobs.find((b) => b.name === name)!

let cases = 0
/** Writes `bytes` as a new package file and returns its path. */
function variant(bytes: Uint8Array): string {
  const path = join(dir, `case${cases++}.fpk`)
  writeFileSync(path, bytes)
  return path
}

/** Re-encodes the header from its fields (after `edit`), with a correct header checksum. */
function withHeader(bytes: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const out = Uint8Array.from(bytes)
  const view = new DataView(out.buffer)
  edit(view)
  view.setUint32(headerField.headerCrc, crc32(out.subarray(0, headerField.headerCrc)), true)
  return out
}

/** Replaces the manifest with `text` (or edited JSON), fixing its length and both checksums. */
function withManifest(edit: ((m: Record<string, any>) => void) | string | Uint8Array): Uint8Array {
  const out = Uint8Array.from(original)
  const h = decodeHeader(out)
  let bytes: Uint8Array
  if (typeof edit === 'function') {
    const m = JSON.parse(Buffer.from(out.subarray(4096, 4096 + h.manifestLength)).toString('utf8'))
    edit(m)
    bytes = Buffer.from(JSON.stringify(m))
  } else {
    bytes = typeof edit === 'string' ? Buffer.from(edit) : edit
  }
  if (4096 + bytes.length > good.blobs[0]!.offset) throw new Error('test manifest too long for the reserved gap')
  out.fill(0, 4096, good.blobs[0]!.offset)
  out.set(bytes, 4096)
  out.set(encodeHeader({ manifestLength: bytes.length, manifestCrc: crc32(bytes) }, crc32), 0)
  return out
}

async function rejects(t: Test, bytes: Uint8Array, message: RegExp, blob?: string, verify: VerifyLevel = 'header'): Promise<void> {
  const path = variant(bytes)
  try {
    const r = await PackageReader.open(path, { verify })
    await r.close()
    t.fail(`expected open to reject with ${message}`)
  } catch (err) {
    t.ok(err instanceof PackageError, `a PackageError (got ${(err as Error).name}: ${(err as Error).message})`)
    t.equal((err as PackageError).code, 'ERR_FLEXPIPE_PACKAGE')
    t.match((err as Error).message, message)
    t.match((err as Error).message, path, 'the message names the file')
    t.equal((err as PackageError).blob, blob, blob ? `names blob ${blob}` : 'names no blob')
  }
}

t.test('the unmodified package opens and verifies', async (t) => {
  const r = await PackageReader.open(variant(original), { verify: 'all' })
  t.equal(r.blobs.length, 4)
  await r.close()
})

t.test('header problems', async (t) => {
  const flip = (at: number) => {
    const b = Uint8Array.from(original)
    b[at]! ^= 0x10
    return b
  }
  await rejects(t, flip(0), /not a flexpipe package: it starts with "VLEXPIPE"/)
  await rejects(t, new Uint8Array(0), /the file is 0 bytes, shorter than the 4096-byte header/)
  await rejects(t, original.subarray(0, 100), /the file is 100 bytes, shorter than the 4096-byte header.*truncated/)
  await rejects(t, flip(headerField.manifestCrc), /the header checksum does not match \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\).*re-run flexpipe prepare/)
  await rejects(t, flip(headerField.headerCrc + 3), /the header checksum does not match/)
  await rejects(t, withHeader(original, (v) => v.setUint32(headerField.flags, 4, true)), /header flags 0x00000004 are not defined/)
  await rejects(t, withHeader(original, (v) => v.setUint8(4000, 1)), /reserved header byte 4000 is not zero/)
  await rejects(t, withHeader(original, (v) => v.setBigUint64(headerField.manifestOffset, 8192n, true)), /the manifest offset is 8192, but it must be 4096/)
  await rejects(t, withHeader(original, (v) => v.setBigUint64(headerField.manifestLength, 0n, true)), /the manifest length 0 is outside/)
  await rejects(t, withHeader(original, (v) => v.setBigUint64(headerField.manifestLength, 1n << 62n, true)), /the manifest length Infinity is outside/)
})

t.test('a package of another format version names both versions', async (t) => {
  await rejects(t, withHeader(original, (v) => v.setUint32(headerField.version, 2, true)), /the package is format version 2, but this flexpipe reads format version 1: re-run flexpipe prepare/)
  const flipped = Uint8Array.from(original)
  flipped[headerField.version + 1]! ^= 1 // corrupt, not re-checksummed
  await rejects(t, flipped, /format version 257, but this flexpipe reads format version 1 \(or its header is corrupt/)
  await rejects(t, withManifest((m) => (m.formatVersion = 2)), /the manifest is format version 2, but this flexpipe reads format version 1/)
})

t.test('manifest bytes: checksum, truncation, encoding, JSON', async (t) => {
  const flipped = Uint8Array.from(original)
  flipped[4096 + 30]! ^= 0x01
  await rejects(t, flipped, /the manifest checksum does not match \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\): the package is corrupt; re-run flexpipe prepare/)
  await rejects(t, original.subarray(0, 4096 + 50), /the manifest ends at byte \d+ past the end of the file \(size 4146\): the package is truncated; re-run flexpipe prepare/)
  await rejects(t, withManifest('{"formatVersion": 1, "producer": '), /the manifest is not JSON \(.*\): the package is corrupt/)
  await rejects(t, withManifest(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), /the manifest is not valid UTF-8/)
  await rejects(t, withManifest('[1, 2]'), /the manifest must be a JSON object, got \[1,2\]/)
})

t.test('manifest fields: missing, unknown or of the wrong type', async (t) => {
  await rejects(t, withManifest((m) => delete m.formatVersion), /manifest field 'formatVersion' must be an integer, got nothing/)
  await rejects(t, withManifest((m) => delete m.producer), /manifest field 'producer' must be a string, got nothing/)
  await rejects(t, withManifest((m) => (m.created = 'yesterday')), /manifest field 'created' must be an ISO 8601 date string, got "yesterday"/)
  await rejects(t, withManifest((m) => delete m.graph), /manifest field 'graph' must be present/)
  await rejects(t, withManifest((m) => (m.meta = [])), /manifest field 'meta' must be a JSON object, got \[\]/)
  await rejects(t, withManifest((m) => (m.blobs = {})), /manifest field 'blobs' must be an array, got \{\}/)
  await rejects(t, withManifest((m) => (m.extra = 1)), /unknown manifest field 'extra'/)
  await rejects(t, withManifest((m) => (m.blobs[2] = 'x')), /manifest blobs\[2\] must be a JSON object, got "x"/)
  await rejects(t, withManifest((m) => (m.blobs[2].name = '')), /manifest blobs\[2\]: field 'name' must be a non-empty string, got ""/)
  await rejects(t, withManifest((m) => (m.blobs[1].offset = String(m.blobs[1].offset))), /blob 'layer3\.w' \(blobs\[1\]\): field 'offset' must be a non-negative integer, got "\d+"/, 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[1].length = 1.5)), /blob 'layer3\.w' \(blobs\[1\]\): field 'length' must be a non-negative integer/, 'layer3.w')
  await rejects(t, withManifest((m) => delete m.blobs[3].paddedLength), /blob 'head\.w' \(blobs\[3\]\): field 'paddedLength' must be a non-negative integer, got nothing/, 'head.w')
  await rejects(t, withManifest((m) => (m.blobs[3].crc32 = 2 ** 32)), /blob 'head\.w' \(blobs\[3\]\): field 'crc32' must be an integer 0 \.\.= 0xffffffff/, 'head.w')
  await rejects(t, withManifest((m) => (m.blobs[0].dtype = 'float128')), /blob 'embed\.w' \(blobs\[0\]\): field 'dtype' must be a dtype name/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[0].dims = [1250, -1])), /blob 'embed\.w' \(blobs\[0\]\): field 'dims' must be an array of non-negative integers/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[0].kind = 7)), /field 'kind' must be a string or absent/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[0].group = null)), /field 'group' must be a string or absent/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[0].shard = 1)), /blob 'embed\.w' \(blobs\[0\]\): unknown field 'shard'/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[0].dims = [1000])), /blob 'embed\.w' \(blobs\[0\]\): float32 \[1000\] is 4000 bytes, but its length is 5000/, 'embed.w')
  await rejects(t, withManifest((m) => (m.blobs[1].paddedLength += 4096)), /blob 'layer3\.w' \(blobs\[1\]\): paddedLength 20480 is not its length 12305 rounded up to 4096 \(16384\)/, 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[2].name = 'layer3.w')), /blob name 'layer3\.w' appears twice \(blobs\[1\] and blobs\[2\]\)/, 'layer3.w')
})

t.test('blob placement: alignment, bounds, overlap', async (t) => {
  const size = original.length
  await rejects(t, withManifest((m) => (m.blobs[1].offset += 1)), /blob 'layer3\.w' starts at byte \d+, which is not a multiple of 4096/, 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[1].offset = 0)), /blob 'layer3\.w' starts at byte 0, inside the header and manifest \(which end at byte 8192\)/, 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[1].offset = size + 40960)), new RegExp(`blob 'layer3\\.w' ends at byte ${size + 40960 + 16384} past the end of the file \\(size ${size}\\): the package is truncated; re-run flexpipe prepare`), 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[1].offset = 2 ** 53 - 4096)), /blob 'layer3\.w' ends at byte \d+ past the end of the file/, 'layer3.w')
  await rejects(t, withManifest((m) => (m.blobs[2].offset = m.blobs[1].offset + 4096)), /blob 'layer3\.b' \[\d+, \d+\) overlaps blob 'layer3\.w' \[\d+, \d+\)/, 'layer3.b')
  await rejects(t, withManifest((m) => (m.blobs[0].offset = m.blobs[3].offset)), /blob 'head\.w' \[\d+, \d+\) overlaps blob 'embed\.w'/, 'head.w')
})

t.test('a file cut in the middle of a blob names that blob', async (t) => {
  const mid = entry('layer3.w').offset + 100
  await rejects(t, original.subarray(0, mid), new RegExp(`blob 'layer3\\.w' ends at byte ${entry('layer3.w').offset + 16384} past the end of the file \\(size ${mid}\\): the package is truncated`), 'layer3.w')
  const last = entry('head.w').offset + 9000 // payload intact, padding cut
  await rejects(t, original.subarray(0, last), /blob 'head\.w' ends at byte \d+ past the end of the file/, 'head.w')
})

t.test('one flipped byte in a blob is found by its checksum, naming the blob', async (t) => {
  const bytes = Uint8Array.from(original)
  bytes[entry('layer3.w').offset + 4097]! ^= 0x80
  const path = variant(bytes)
  const r = await PackageReader.open(path) // structure is intact
  t.same(await r.readBlob('embed.w'), new Uint8Array(5000).fill(3), 'other blobs read fine')
  await t.rejects(r.readBlob('layer3.w'), {
    code: 'ERR_FLEXPIPE_PACKAGE',
    blob: 'layer3.w',
    message: /blob 'layer3\.w' checksum does not match \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\): the package is corrupt; re-run flexpipe prepare/,
  })
  await r.close()
  await rejects(t, bytes, /blob 'layer3\.w' checksum does not match/, 'layer3.w', 'all')
})
