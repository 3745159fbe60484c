// SPDX-License-Identifier: Apache-2.0
// The .fpk package format: layout, constants, manifest types and the header codec.
//
// A package is one file that `flexpipe prepare` writes and the runtime reads with O_DIRECT:
//
//   [0, 4096)          header (fixed size, little-endian)
//   [4096, 4096 + M)   manifest: UTF-8 JSON, M = manifest length
//   [4096 + M, D)      zeros: padding, plus any room the writer reserved for the manifest;
//                      D (the first blob's offset) >= padToBlob(4096 + M)
//   [D, end)           blobs, each at a 4096-aligned offset, padded with zeros to a 4096 multiple
//
// Header fields:
//
//   offset  size  field
//        0     8  magic            the ASCII bytes "FLEXPIPE"
//        8     4  format version   u32, = formatVersion (1); stays at this offset in every version
//       12     4  flags            u32, no flag is defined in version 1: must be 0
//       16     8  manifest offset  u64, = 4096 (the manifest follows the header)
//       24     8  manifest length  u64, bytes of JSON, 1 ..= manifestBytesMax
//       32     4  manifest CRC-32  u32, over the manifest bytes
//       36     4  header CRC-32    u32, over header bytes [0, 36)
//       40  4056  reserved         zero
//
// Why the manifest comes first: a file cut anywhere in the blob region still has an intact manifest,
// so the reader can name the blob that was cut. The writer streams blobs after a reserved gap
// (PackageWriter's `manifestReserve`) and moves them up if the manifest turns out larger.
//
// Blob entries (manifest.blobs) give offset, length (bytes of payload), paddedLength (= length rounded
// up to 4096, so whole-blob O_DIRECT reads stay inside the blob) and crc32 over the payload only. Blobs
// lie at or after the first 4096 boundary past the manifest, within the file, without overlapping.
// The writer writes the header last, so a file left by a crash has no magic and is rejected.
// CRC-32 is the zlib/PNG/gzip polynomial (see crc32.ts).
import type { DType } from '../model/dtype.js'
import { alignUp } from '../align.js'

export const formatVersion = 1
export const headerBytes = 4096
/** Alignment of blob offsets and of padded blob lengths (the O_DIRECT block size we plan for). */
export const blobAlignment = 4096
/** Largest manifest a reader accepts (a sanity bound before allocating). */
export const manifestBytesMax = 256 * 1024 * 1024
export const magic = 'FLEXPIPE'

/** Byte offsets of the header fields. */
export const headerField = {
  magic: 0,
  version: 8,
  flags: 12,
  manifestOffset: 16,
  manifestLength: 24,
  manifestCrc: 32,
  headerCrc: 36,
  reserved: 40,
} as const

export interface BlobInfo {
  /** Element type of the payload, when it is a plain tensor. */
  readonly dtype?: DType
  /** Tensor dims; with dtype, length must equal numel(dims) * bytes(dtype). */
  readonly dims?: readonly number[]
  /** What the blob is, for later stages: 'weight', 'shard', 'lut', ... */
  readonly kind?: string
  /** Which group it belongs to: 'layer 3', 'shard 2 @4bit', ... */
  readonly group?: string
}

export interface BlobEntry extends BlobInfo {
  readonly name: string
  /** Byte offset in the file; a multiple of blobAlignment. */
  readonly offset: number
  /** Payload bytes. */
  readonly length: number
  /** length rounded up to blobAlignment: the bytes to read for an aligned whole-blob read. */
  readonly paddedLength: number
  /** CRC-32 of the payload (not of the padding). */
  readonly crc32: number
}

export interface PackageManifest {
  readonly formatVersion: number
  /** Who wrote the package, e.g. 'flexpipe 0.1.0 prepare'. */
  readonly producer: string
  /** ISO 8601 time of writing. */
  readonly created: string
  /** The model's graph description; the prepare stage defines it. */
  readonly graph: unknown
  readonly blobs: readonly BlobEntry[]
  readonly meta: Readonly<Record<string, unknown>>
}

export interface Header {
  readonly magic: string
  readonly version: number
  readonly flags: number
  readonly manifestOffset: number
  readonly manifestLength: number
  readonly manifestCrc: number
  readonly headerCrc: number
}

/** n rounded up to the blob alignment (blobs and the manifest start at multiples of it). */
export const padToBlob = (n: number): number => alignUp(n, blobAlignment)

/** The header bytes for a manifest of this length and CRC; `headerCrc` is computed by `crc`. */
export function encodeHeader(
  fields: { version?: number; flags?: number; manifestLength: number; manifestCrc: number },
  crc: (b: Uint8Array) => number,
): Uint8Array {
  const bytes = new Uint8Array(headerBytes)
  const view = new DataView(bytes.buffer)
  bytes.set(Buffer.from(magic, 'latin1'), headerField.magic)
  view.setUint32(headerField.version, fields.version ?? formatVersion, true)
  view.setUint32(headerField.flags, fields.flags ?? 0, true)
  view.setBigUint64(headerField.manifestOffset, BigInt(headerBytes), true)
  view.setBigUint64(headerField.manifestLength, BigInt(fields.manifestLength), true)
  view.setUint32(headerField.manifestCrc, fields.manifestCrc >>> 0, true)
  view.setUint32(headerField.headerCrc, crc(bytes.subarray(0, headerField.headerCrc)), true)
  return bytes
}

/** Reads the header fields without judging them (u64 fields beyond 2^53 come back as Infinity). */
export function decodeHeader(bytes: Uint8Array): Header {
  const view = new DataView(bytes.buffer, bytes.byteOffset, headerBytes)
  const u64 = (at: number): number => {
    const v = view.getBigUint64(at, true)
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v)
  }
  return {
    magic: Buffer.from(bytes.subarray(0, 8)).toString('latin1'),
    version: view.getUint32(headerField.version, true),
    flags: view.getUint32(headerField.flags, true),
    manifestOffset: u64(headerField.manifestOffset),
    manifestLength: u64(headerField.manifestLength),
    manifestCrc: view.getUint32(headerField.manifestCrc, true),
    headerCrc: view.getUint32(headerField.headerCrc, true),
  }
}
