// SPDX-License-Identifier: Apache-2.0
// Replaces a finished package's `meta` in place (prepare adds the device profile it measures on the
// written package). The new manifest must fit in the room before the first blob (PackageWriter's
// manifestReserve); blobs never move. Not crash-atomic: a crash mid-rewrite leaves a manifest whose
// checksum fails, which readers reject (re-run prepare).
import { open as openFile } from 'node:fs/promises'
import { IOError, PackageError } from '../errors.js'
import { crc32 } from './crc32.js'
import { padToBlob, encodeHeader, headerBytes } from './format.js'
import { PackageReader } from './reader.js'

export async function rewritePackageMeta(path: string, meta: Record<string, unknown>): Promise<void> {
  const reader = await PackageReader.open(path)
  const m = reader.manifest
  await reader.close()
  const text = JSON.stringify({ formatVersion: m.formatVersion, producer: m.producer, created: m.created, graph: m.graph, blobs: m.blobs, meta })
  const bytes = Buffer.from(text, 'utf8')
  const dataStart = m.blobs.reduce((least, b) => (b.paddedLength > 0 ? Math.min(least, b.offset) : least), Infinity)
  const room = Number.isFinite(dataStart) ? dataStart : Infinity
  if (padToBlob(headerBytes + bytes.length) > room) {
    throw new PackageError(`package ${path}: the new manifest (${bytes.length} bytes) does not fit before the first blob at byte ${room}`)
  }
  const h = await openFile(path, 'r+').catch((err: unknown) => {
    throw new IOError(`failed to open ${path} for writing: ${(err as Error).message}`, { cause: err })
  })
  try {
    const end = Number.isFinite(room) ? room : padToBlob(headerBytes + bytes.length)
    const body = new Uint8Array(end - headerBytes)
    body.set(bytes)
    await h.write(body, 0, body.length, headerBytes)
    await h.datasync()
    const header = encodeHeader({ manifestLength: bytes.length, manifestCrc: crc32(bytes) }, crc32)
    await h.write(header, 0, header.length, 0)
    await h.sync()
  } catch (err) {
    throw new IOError(`failed to rewrite the manifest of ${path}: ${(err as Error).message}`, { cause: err })
  } finally {
    await h.close()
  }
}
