// SPDX-License-Identifier: Apache-2.0
// PackageWriter: streams blobs into a new .fpk file, then the manifest, then the header, and moves
// the finished file into place atomically (see format.ts for the layout).
//
// Blobs are written as they arrive, after a gap reserved for the manifest; if the manifest outgrows
// the gap, finish() moves the blob region up in place (one copy) so the manifest still precedes the
// blobs. Until the header is written the temporary file has no magic, so a crash leaves nothing a
// reader would accept, and the target path only ever holds a complete package.
import { randomBytes } from 'node:crypto'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import { ArgumentError, IOError, PackageError } from '../errors.js'
import { dtypeBytes, isDType } from '../model/dtype.js'
import { crc32 } from './crc32.js'
import {
  padToBlob,
  encodeHeader,
  formatVersion,
  headerBytes,
  type BlobEntry,
  type BlobInfo,
  type PackageManifest,
} from './format.js'

export interface PackageWriterOptions {
  /** Who writes the package, e.g. 'flexpipe 0.1.0 prepare'. */
  readonly producer: string
  /** The manifest's `created` time (default: now); fix it for reproducible packages. */
  readonly created?: Date
  /** Bytes reserved for the manifest before the first blob (default 1 MiB); more is moved for. */
  readonly manifestReserve?: number
}

const copyChunk = 8 << 20
/** Largest single read or write (fs calls take int32 lengths). */
const ioMax = 1 << 30
const zeros = new Uint8Array(1 << 16)

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
const bytesOf = (v: ArrayBufferView): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength)

async function writeAll(h: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await h.write(bytes, done, Math.min(bytes.length - done, ioMax), position + done)
    done += bytesWritten
  }
}

async function writeZeros(h: FileHandle, position: number, count: number): Promise<void> {
  for (let done = 0; done < count; done += zeros.length) {
    await writeAll(h, zeros.subarray(0, Math.min(zeros.length, count - done)), position + done)
  }
}

function checkInfo(name: string, length: number, info: BlobInfo): BlobInfo {
  const at = `addBlob '${name}'`
  const { dtype, dims, kind, group } = info
  if (dtype !== undefined && !isDType(dtype)) throw new ArgumentError(`${at}: dtype: expected a dtype name, got ${String(dtype)}`)
  if (dims !== undefined && !(Array.isArray(dims) && dims.every(isCount))) {
    throw new ArgumentError(`${at}: dims: expected an array of non-negative integers, got ${JSON.stringify(dims)}`)
  }
  for (const [key, v] of [['kind', kind], ['group', group]] as const) {
    if (v !== undefined && typeof v !== 'string') throw new ArgumentError(`${at}: ${key}: expected a string, got ${typeof v}`)
  }
  if (dtype !== undefined && dims !== undefined && dims.reduce((n, d) => n * d, 1) * dtypeBytes(dtype) !== length) {
    throw new ArgumentError(`${at}: ${dtype} [${dims.join(', ')}] does not match its ${length} bytes`)
  }
  return {
    ...(dtype !== undefined && { dtype }),
    ...(dims !== undefined && { dims: [...dims] }),
    ...(kind !== undefined && { kind }),
    ...(group !== undefined && { group }),
  }
}

export class PackageWriter {
  /** Where the finished package will be. */
  readonly path: string
  /** Where it is written until finish() renames it. */
  readonly tempPath: string
  private readonly handle: FileHandle
  private readonly producer: string
  private readonly created: Date
  private readonly entries: BlobEntry[] = []
  private readonly names = new Set<string>()
  private dataStart: number
  private cursor: number
  private tail: Promise<void> = Promise.resolve()
  private failure: unknown
  private state: 'open' | 'finishing' | 'closed' = 'open'

  private constructor(path: string, tempPath: string, handle: FileHandle, options: Required<PackageWriterOptions>) {
    this.path = path
    this.tempPath = tempPath
    this.handle = handle
    this.producer = options.producer
    this.created = new Date(options.created.getTime())
    this.dataStart = padToBlob(headerBytes + options.manifestReserve)
    this.cursor = this.dataStart
  }

  /** Starts a package at `path` (written to a temporary file beside it until finish()). */
  static async create(path: string, options: PackageWriterOptions): Promise<PackageWriter> {
    if (typeof path !== 'string' || path === '') throw new ArgumentError(`path: expected a file path, got ${String(path)}`)
    const { producer, created = new Date(), manifestReserve = 1 << 20 } = options ?? {}
    if (typeof producer !== 'string') throw new ArgumentError(`producer: expected a string, got ${typeof producer}`)
    if (!(created instanceof Date) || Number.isNaN(created.getTime())) throw new ArgumentError(`created: expected a valid Date, got ${String(created)}`)
    if (!isCount(manifestReserve)) throw new ArgumentError(`manifestReserve: expected a non-negative integer, got ${manifestReserve}`)
    const tempPath = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    let handle: FileHandle
    try {
      handle = await open(tempPath, 'wx+') // read too: finish() may move blobs
    } catch (err) {
      throw new IOError(`failed to create package ${path}: ${(err as Error).message}`, { cause: err })
    }
    return new PackageWriter(path, tempPath, handle, { producer, created, manifestReserve })
  }

  /**
   * Appends a blob: its bytes go to the file at the next 4096-aligned offset, padded with zeros.
   * Do not modify `bytes` until the promise settles. Offsets are final in finish()'s manifest.
   */
  addBlob(name: string, bytes: ArrayBufferView, info: BlobInfo = {}): Promise<void> {
    if (typeof name !== 'string' || name === '') throw new ArgumentError(`addBlob: name: expected a non-empty string, got ${JSON.stringify(name)}`)
    if (!ArrayBuffer.isView(bytes)) throw new ArgumentError(`addBlob '${name}': bytes: expected a TypedArray, Buffer or DataView`)
    this.checkOpen('addBlob')
    if (this.names.has(name)) throw new ArgumentError(`addBlob: a blob named '${name}' was already added; names must be unique`)
    const extra = checkInfo(name, bytes.byteLength, info ?? {})
    this.names.add(name)
    const index = this.entries.length
    const offset = this.cursor
    const paddedLength = padToBlob(bytes.byteLength)
    this.cursor += paddedLength
    this.entries.push({ name, offset, length: bytes.byteLength, paddedLength, crc32: 0, ...extra })
    const task = this.tail.then(async () => {
      if (this.failure !== undefined) throw this.failure
      const data = bytesOf(bytes)
      this.entries[index] = { ...this.entries[index]!, crc32: crc32(data) }
      await this.io(async () => {
        await writeAll(this.handle, data, offset)
        await writeZeros(this.handle, offset + data.length, paddedLength - data.length)
      })
    })
    this.tail = task.catch((err: unknown) => {
      this.failure ??= err
    })
    return task
  }

  /**
   * Writes the manifest (with `graph` and `meta`) and the header, syncs, and renames the file into
   * place. Returns the manifest as written. On failure the temporary file is removed.
   */
  async finish(graph: unknown, meta: Record<string, unknown> = {}): Promise<PackageManifest> {
    this.checkOpen('finish')
    if (graph === undefined) throw new ArgumentError('finish: graph: expected a JSON value, got undefined')
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw new ArgumentError('finish: meta: expected a plain object')
    let graphJson: string, metaJson: string
    try {
      graphJson = JSON.stringify(graph)
      metaJson = JSON.stringify(meta)
    } catch (err) {
      throw new ArgumentError(`finish: graph and meta must be JSON-serialisable: ${(err as Error).message}`)
    }
    this.state = 'finishing'
    await this.tail
    if (this.failure !== undefined) {
      await this.abort()
      throw this.failure
    }
    try {
      const manifestBytes = await this.place(graphJson, metaJson)
      await this.io(() => this.commit(manifestBytes))
    } catch (err) {
      await this.abort()
      throw err
    }
    this.state = 'closed'
    return { formatVersion, producer: this.producer, created: this.created.toISOString(), graph, blobs: [...this.entries], meta }
  }

  /** Abandons the package: closes and removes the temporary file. Safe to call more than once. */
  async abort(): Promise<void> {
    if (this.state === 'closed') return
    this.state = 'closed'
    await this.tail
    await this.handle.close().catch(() => undefined)
    await unlink(this.tempPath).catch(() => undefined)
  }

  private checkOpen(what: string): void {
    if (this.state !== 'open') throw new PackageError(`${what}: the writer of ${this.path} is finished or aborted; create a new PackageWriter`)
  }

  private async io(fn: () => Promise<void>): Promise<void> {
    try {
      await fn()
    } catch (err) {
      throw new IOError(`failed to write package ${this.path} (at ${this.tempPath}): ${(err as Error).message}`, { cause: err })
    }
  }

  private manifestJson(graphJson: string, metaJson: string): Uint8Array {
    const head = JSON.stringify({ formatVersion, producer: this.producer, created: this.created.toISOString() })
    const text = `${head.slice(0, -1)},"graph":${graphJson},"blobs":${JSON.stringify(this.entries)},"meta":${metaJson}}`
    return Buffer.from(text, 'utf8')
  }

  /** Serialises the manifest, moving the blobs up first if it does not fit before them. */
  private async place(graphJson: string, metaJson: string): Promise<Uint8Array> {
    const start = this.dataStart
    let bytes = this.manifestJson(graphJson, metaJson)
    let delta = 0
    while (padToBlob(headerBytes + bytes.length) > start + delta) {
      const shift = padToBlob(headerBytes + bytes.length) - start - delta
      delta += shift
      for (let i = 0; i < this.entries.length; i++) this.entries[i] = { ...this.entries[i]!, offset: this.entries[i]!.offset + shift }
      bytes = this.manifestJson(graphJson, metaJson)
    }
    if (delta > 0) {
      await this.io(() => this.moveUp(start, this.cursor, delta))
      this.dataStart += delta
      this.cursor += delta
    }
    return bytes
  }

  /** Moves bytes [from, to) up by delta, last chunk first so nothing is overwritten before it is read. */
  private async moveUp(from: number, to: number, delta: number): Promise<void> {
    const buf = new Uint8Array(Math.min(copyChunk, Math.max(to - from, 1)))
    for (let end = to; end > from; ) {
      const begin = Math.max(from, end - buf.length)
      const chunk = buf.subarray(0, end - begin)
      for (let done = 0; done < chunk.length; ) {
        const { bytesRead } = await this.handle.read(chunk, done, chunk.length - done, begin + done)
        if (bytesRead === 0) throw new Error(`unexpected end of ${this.tempPath} at byte ${begin + done}`)
        done += bytesRead
      }
      await writeAll(this.handle, chunk, begin + delta)
      end = begin
    }
  }

  private async commit(manifest: Uint8Array): Promise<void> {
    const h = this.handle
    await writeAll(h, manifest, headerBytes)
    await writeZeros(h, headerBytes + manifest.length, this.dataStart - headerBytes - manifest.length)
    await h.truncate(this.cursor)
    await h.datasync() // everything else reaches the disk before the header that makes it valid
    await writeAll(h, encodeHeader({ manifestLength: manifest.length, manifestCrc: crc32(manifest) }, crc32), 0)
    await h.sync()
    await h.close()
    await rename(this.tempPath, this.path)
    await syncDirectory(dirname(this.path))
  }
}

/** Makes the rename durable; some platforms cannot fsync a directory, which is not an error there. */
async function syncDirectory(dir: string): Promise<void> {
  let h: FileHandle | undefined
  try {
    h = await open(dir, 'r')
    await h.sync()
  } catch {
    /* c8 ignore next */
  } finally {
    await h?.close()
  }
}
