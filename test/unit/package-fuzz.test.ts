// SPDX-License-Identifier: Apache-2.0
// Fuzzing: damaged packages either open and read back verified data, or fail with PackageError — nothing else.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { seededRandom } from '../../lib/cli/inputs.js'
import { PackageError } from '../../lib/errors.js'
import { crc32 } from '../../lib/package/crc32.js'
import { decodeHeader, headerField, type BlobEntry } from '../../lib/package/format.js'
import { PackageReader } from '../../lib/package/reader.js'
import { PackageWriter } from '../../lib/package/writer.js'

const dir = mkdtempSync(join(tmpdir(), 'flexpipe-package-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const seed = 20250101
const trials = 200
const rand = seededRandom(seed)
const int = (n: number): number => Math.floor(rand() * n)

const base = join(dir, 'base.fpk')
const w = await PackageWriter.create(base, { producer: 'fuzz', manifestReserve: 0 })
const payload = new Map<string, Uint8Array>()
for (const [name, n] of [['a', 10], ['b', 4097], ['c', 0], ['d', 300]] as const) {
  const bytes = new Uint8Array(n).map((_, i) => (i * 31 + name.charCodeAt(0)) & 0xff)
  payload.set(name, bytes)
  await w.addBlob(name, bytes, name === 'd' ? { dtype: 'float32', dims: [75], kind: 'weight', group: 'g' } : {})
}
const manifest = await w.finish({ nodes: [{ op: 'Relu' }] }, { k: [1, 2] })
const original = readFileSync(base)
const originalEntry = new Map(manifest.blobs.map((b) => [b.name, b]))
const manifestLength = decodeHeader(original).manifestLength

/** Re-checksums the manifest and the header so a mutation reaches the parser and validators. */
function rechecksum(b: Uint8Array, manifestToo: boolean): void {
  const view = new DataView(b.buffer, b.byteOffset)
  if (manifestToo) view.setUint32(headerField.manifestCrc, crc32(b.subarray(4096, 4096 + manifestLength)), true)
  view.setUint32(headerField.headerCrc, crc32(b.subarray(0, headerField.headerCrc)), true)
}

const jsonish = '0123456789-.e"{}[],:x '

/**
 * One damaged copy. Modes cycle: 0 flips random bytes anywhere; 1 flips header bytes and re-checksums
 * the header; 2 writes JSON-ish characters into the manifest and re-checksums it; 3 truncates.
 */
function damage(trial: number): { bytes: Uint8Array; what: string } {
  const b = Uint8Array.from(original)
  const mode = trial % 4
  if (mode === 3) {
    const cut = int(b.length)
    return { bytes: b.subarray(0, cut), what: `truncated to ${cut}` }
  }
  const where: number[] = []
  for (let i = 1 + int(3); i > 0; i--) {
    const at = mode === 0 ? int(b.length) : mode === 1 ? int(headerField.reserved) : 4096 + int(manifestLength)
    b[at] = mode === 2 ? jsonish.charCodeAt(int(jsonish.length)) : b[at]! ^ (1 + int(255))
    where.push(at)
  }
  if (mode !== 0) rechecksum(b, mode === 2)
  return { bytes: b, what: `mode ${mode}, bytes ${where.join(',')} changed` }
}

/** Opens with full verification and reads every blob; returns the blobs read. */
async function readAll(path: string): Promise<Map<string, [BlobEntry, Uint8Array]>> {
  const r = await PackageReader.open(path, { verify: 'all' })
  try {
    const out = new Map<string, [BlobEntry, Uint8Array]>()
    for (const e of r.blobs) out.set(e.name, [e, await r.readBlob(e.name)])
    return out
  } finally {
    await r.close()
  }
}

t.test(`${trials} damaged packages: verified data or PackageError (seed ${seed})`, async (t) => {
  const outcomes = { opened: 0, rejected: 0 }
  for (let trial = 0; trial < trials; trial++) {
    const { bytes, what } = damage(trial)
    const path = join(dir, `trial${trial}.fpk`)
    writeFileSync(path, bytes)
    try {
      const blobs = await readAll(path)
      outcomes.opened++
      for (const [name, [e, data]] of blobs) {
        t.equal(crc32(data), e.crc32, `trial ${trial} (${what}): blob '${name}' matches its checksum`)
        const o = originalEntry.get(name)
        if (o && o.offset === e.offset && o.length === e.length) {
          t.ok(Buffer.from(data).equals(Buffer.from(payload.get(name)!)), `trial ${trial} (${what}): blob '${name}' is the original data`)
        }
      }
    } catch (err) {
      outcomes.rejected++
      if (!(err instanceof PackageError)) {
        t.fail(`trial ${trial} (${what}, seed ${seed}) threw ${(err as Error)?.name}: ${(err as Error)?.message}`)
      }
    }
  }
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`)
  t.ok(outcomes.rejected > trials / 2, 'most damage is detected')
  t.pass(`all ${trials} trials ended in verified data or a PackageError`)
})
