// SPDX-License-Identifier: Apache-2.0
// PackageReader: opens a .fpk file and validates all of its structure before anything is used.
//
// open() checks the header (magic, version, checksum, fields), the manifest (bounds, checksum, UTF-8,
// JSON, schema) and every blob entry (alignment, bounds, overlap, unique names); with verify 'all'
// it also checksums every blob, streaming in chunks. Each problem is a PackageError naming the
// field or blob and what to do. Reads go through positional reads on one open file handle.
import { open as openFile, type FileHandle } from 'node:fs/promises'
import { ArgumentError, IOError, PackageError } from '../errors.js'
import { crc32 } from './crc32.js'
import {
  padToBlob,
  decodeHeader,
  formatVersion,
  headerBytes,
  headerField,
  magic,
  manifestBytesMax,
  type BlobEntry,
  type Header,
  type PackageManifest,
} from './format.js'
import { checkLayout, corrupt, decodeManifest, truncated } from './manifest.js'

export type VerifyLevel = 'header' | 'all'

export interface PackageReaderOptions {
  /** 'header' (default): validate structure; 'all': also verify every blob's checksum. */
  readonly verify?: VerifyLevel
}

const verifyChunk = 1 << 20
/** Largest single read (fs calls take int32 lengths). */
const ioMax = 1 << 30
const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`

/** Reads up to bytes.length bytes at position; returns how many there were before end of file. */
async function readAt(h: FileHandle, bytes: Uint8Array, position: number): Promise<number> {
  let done = 0
  while (done < bytes.length) {
    const { bytesRead } = await h.read(bytes, done, Math.min(bytes.length - done, ioMax), position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

async function io<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof PackageError) throw err
    throw new IOError(`failed to read package ${path}: ${(err as Error).message}`, { cause: err })
  }
}

function checkHeader(bytes: Uint8Array, fileSize: number, label: string): Header {
  const fail = (message: string): never => {
    throw new PackageError(`${label}: ${message}`)
  }
  const h = decodeHeader(bytes)
  if (h.magic !== magic) {
    fail(
      `not a flexpipe package: it starts with ${JSON.stringify(h.magic)}, not "${magic}" ` +
        '(a package whose writing was interrupted has no header); re-run flexpipe prepare',
    )
  }
  const crc = crc32(bytes.subarray(0, headerField.headerCrc))
  if (h.version !== formatVersion) {
    const why = crc === h.headerCrc ? '' : ' (or its header is corrupt: the header checksum does not match)'
    fail(
      `the package is format version ${h.version}, but this flexpipe reads format version ${formatVersion}${why}: ` +
        're-run flexpipe prepare with this flexpipe, or open the package with the flexpipe that wrote it',
    )
  }
  if (crc !== h.headerCrc) {
    fail(`the header checksum does not match (stored ${hex(h.headerCrc)}, computed ${hex(crc)}): ${corrupt}`)
  }
  if (h.flags !== 0) fail(`header flags ${hex(h.flags)} are not defined in format version ${formatVersion}: ${corrupt}`)
  const stray = bytes.subarray(headerField.reserved).findIndex((b) => b !== 0)
  if (stray >= 0) fail(`reserved header byte ${headerField.reserved + stray} is not zero: ${corrupt}`)
  if (h.manifestOffset !== headerBytes) {
    fail(`the manifest offset is ${h.manifestOffset}, but it must be ${headerBytes}: ${corrupt}`)
  }
  if (h.manifestLength < 1 || h.manifestLength > manifestBytesMax) {
    fail(`the manifest length ${h.manifestLength} is outside 1 ..= ${manifestBytesMax}: ${corrupt}`)
  }
  const end = h.manifestOffset + h.manifestLength
  if (end > fileSize) fail(`the manifest ends at byte ${end} past the end of the file (size ${fileSize}): ${truncated}`)
  return h
}

export class PackageReader {
  readonly path: string
  /** File size when it was opened. */
  readonly fileSize: number
  readonly header: Header
  readonly manifest: PackageManifest
  private readonly handle: FileHandle
  private readonly byName: ReadonlyMap<string, BlobEntry>
  private closed = false

  private constructor(path: string, handle: FileHandle, fileSize: number, header: Header, manifest: PackageManifest) {
    this.path = path
    this.handle = handle
    this.fileSize = fileSize
    this.header = header
    this.manifest = manifest
    this.byName = new Map(manifest.blobs.map((b) => [b.name, b]))
  }

  /** Opens and validates a package; rejects with PackageError (bad package) or IOError (the OS). */
  static async open(path: string, options: PackageReaderOptions = {}): Promise<PackageReader> {
    if (typeof path !== 'string' || path === '') {
      throw new ArgumentError(`path: expected a file path, got ${String(path)}`)
    }
    const verify = options?.verify ?? 'header'
    if (verify !== 'header' && verify !== 'all') {
      throw new ArgumentError(`verify: expected 'header' or 'all', got ${String(verify)}`)
    }
    const handle = await io(path, () => openFile(path, 'r'))
    try {
      const reader = await io(path, () => PackageReader.load(path, handle))
      if (verify === 'all') await reader.verifyAll()
      return reader
    } catch (err) {
      await handle.close().catch(() => undefined)
      throw err
    }
  }

  private static async load(path: string, handle: FileHandle): Promise<PackageReader> {
    const label = `package ${path}`
    const fileSize = (await handle.stat()).size
    if (fileSize < headerBytes) {
      throw new PackageError(
        `${label}: the file is ${fileSize} bytes, shorter than the ${headerBytes}-byte header: ` +
          'it is not a flexpipe package or it is truncated; re-run flexpipe prepare',
      )
    }
    const head = new Uint8Array(headerBytes)
    await readAt(handle, head, 0)
    const header = checkHeader(head, fileSize, label)
    const bytes = new Uint8Array(header.manifestLength)
    const got = await readAt(handle, bytes, header.manifestOffset)
    if (got < bytes.length) {
      const [end, size] = [header.manifestOffset + bytes.length, header.manifestOffset + got]
      throw new PackageError(`${label}: the manifest ends at byte ${end} past the end of the file (size ${size}): ${truncated}`)
    }
    const crc = crc32(bytes)
    if (crc !== header.manifestCrc) {
      const found = `stored ${hex(header.manifestCrc)}, computed ${hex(crc)}`
      throw new PackageError(`${label}: the manifest checksum does not match (${found}): ${corrupt}`)
    }
    const manifest = decodeManifest(bytes, label)
    checkLayout(manifest.blobs, padToBlob(header.manifestOffset + header.manifestLength), fileSize, label)
    return new PackageReader(path, handle, fileSize, header, manifest)
  }

  /** Every blob entry, in manifest order. */
  get blobs(): readonly BlobEntry[] {
    return this.manifest.blobs
  }

  has(name: string): boolean {
    return this.byName.has(name)
  }

  /** The entry of blob `name`; throws PackageError if the package has none. */
  blob(name: string): BlobEntry {
    const b = this.byName.get(name)
    if (b === undefined) {
      const n = this.byName.size
      const some = [...this.byName.keys()].slice(0, 5).map((k) => `'${k}'`)
      const list = n === 0 ? '' : `: ${some.join(', ')}${n > 5 ? ', ...' : ''}`
      throw new PackageError(
        `package ${this.path} has no blob named '${name}' (it has ${n}${list}); ` +
          'was it prepared by another flexpipe or for another model?',
        { blob: name },
      )
    }
    return b
  }

  /** Reads blob `name` into a new Uint8Array of its length and verifies its checksum. */
  async readBlob(name: string): Promise<Uint8Array> {
    const b = this.blob(name)
    this.checkOpen('readBlob')
    const bytes = new Uint8Array(b.length)
    const got = await io(this.path, () => readAt(this.handle, bytes, b.offset))
    if (got < b.length) this.shrunk(b, b.offset + got)
    this.checkCrc(b, crc32(bytes))
    return bytes
  }

  /** Verifies every blob's checksum, streaming each through one chunk buffer in file order. */
  async verifyAll(): Promise<void> {
    this.checkOpen('verifyAll')
    const buf = new Uint8Array(verifyChunk)
    for (const b of [...this.blobs].sort((x, y) => x.offset - y.offset)) {
      let crc = 0
      for (let done = 0; done < b.length; ) {
        const chunk = buf.subarray(0, Math.min(buf.length, b.length - done))
        const got = await io(this.path, () => readAt(this.handle, chunk, b.offset + done))
        if (got < chunk.length) this.shrunk(b, b.offset + done + got)
        crc = crc32(chunk, crc)
        done += chunk.length
      }
      this.checkCrc(b, crc)
    }
  }

  /** Closes the file. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.handle.close()
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new PackageError(`${what}: the reader of package ${this.path} is closed; open it again`)
  }

  private checkCrc(b: BlobEntry, crc: number): void {
    if (crc !== b.crc32) {
      throw new PackageError(
        `package ${this.path}: blob '${b.name}' checksum does not match (stored ${hex(b.crc32)}, computed ${hex(crc)}): ${corrupt}`,
        { blob: b.name },
      )
    }
  }

  private shrunk(b: BlobEntry, end: number): never {
    throw new PackageError(
      `package ${this.path}: blob '${b.name}' ends at byte ${b.offset + b.length}, but the file now ends at byte ${end} ` +
        `(it was ${this.fileSize} bytes when opened): ${truncated}`,
      { blob: b.name },
    )
  }
}
