// SPDX-License-Identifier: Apache-2.0
// The FPQ1 quantized shard blob in TypeScript: its size, a bounds-checked header parse and a plain
// reference decoder (the native side is native/runtime/quant_blob.h and the DequantizeShard op).
//
// Little-endian: "FPQ1", u32 bits (2..8), u32 count, u32 outliers, u32 reserved[4] = 0, then
// f32 centroids[2^bits], u32 outlierIndex[outliers] (strictly ascending, < count), f32 outlierValue[outliers],
// u8 packed[ceil(count*bits/8)] (k-bit indices, LSB-first; an outlier's is 0), zero padding to 4 bytes.
import { PackageError } from '../errors.js'

const magic = 0x31515046 // "FPQ1" read as a little-endian u32
const headerBytes = 32

/** 32 + 4 * 2^bits + 8 * outliers + roundUp4(ceil(count * bits / 8)). */
export function quantBlobBytes(count: number, bits: number, outliers: number): number {
  const packed = Math.ceil((count * bits) / 8)
  return headerBytes + 4 * 2 ** bits + 8 * outliers + Math.ceil(packed / 4) * 4
}

export interface QuantBlobHeader {
  bits: number
  count: number
  outliers: number
  /** Copies of the tables (the blob may sit at any byte offset). */
  centroids: Float32Array
  outlierIndex: Uint32Array
  outlierValue: Float32Array
  /** Byte offset of the packed indices in the blob. */
  packedOffset: number
}

function fail(reason: string): never {
  throw new PackageError(`failed to read FPQ1 blob: ${reason}`)
}

/**
 * Parses and checks a blob: magic, bits 2..8, zero reserved words, outliers <= count, the blob at least
 * quantBlobBytes long, outlier indices strictly ascending and < count. Throws PackageError otherwise.
 */
export function parseQuantBlobHeader(blob: Uint8Array): QuantBlobHeader {
  if (blob.length < headerBytes) fail(`shorter than its 32-byte header (bytes=${blob.length})`)
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength)
  const u32 = (at: number): number => view.getUint32(at, true)
  if (u32(0) !== magic) fail('bad magic (expected "FPQ1")')
  const bits = u32(4)
  const count = u32(8)
  const outliers = u32(12)
  if (bits < 2 || bits > 8) fail(`bits must be 2..8 (bits=${bits})`)
  for (let r = 0; r < 4; r++) if (u32(16 + 4 * r) !== 0) fail(`reserved word ${r} is not 0`)
  if (outliers > count) fail(`more outliers than weights (outliers=${outliers}, count=${count})`)
  const need = quantBlobBytes(count, bits, outliers)
  if (blob.length < need) fail(`truncated (bytes=${blob.length}, need=${need})`)
  const at = (offset: number, bytes: number): ArrayBuffer => blob.slice(offset, offset + bytes).buffer
  const centroids = new Float32Array(at(headerBytes, 4 * 2 ** bits))
  const indexOffset = headerBytes + 4 * 2 ** bits
  const outlierIndex = new Uint32Array(at(indexOffset, 4 * outliers))
  const outlierValue = new Float32Array(at(indexOffset + 4 * outliers, 4 * outliers))
  for (let j = 0; j < outliers; j++) {
    const i = outlierIndex[j]!
    if (i >= count) fail(`outlier index out of range (outlier=${j}, index=${i}, count=${count})`)
    if (j > 0 && i <= outlierIndex[j - 1]!) fail(`outlier indices not strictly ascending (outlier=${j}, index=${i})`)
  }
  return { bits, count, outliers, centroids, outlierIndex, outlierValue, packedOffset: indexOffset + 8 * outliers }
}

/** Decodes a blob weight by weight: outlierValue where there is one, else centroids[index]. */
export function dequantizeReference(blob: Uint8Array): Float32Array {
  const h = parseQuantBlobHeader(blob)
  const out = new Float32Array(h.count)
  const mask = (1 << h.bits) - 1
  for (let i = 0; i < h.count; i++) {
    const bit = i * h.bits
    const at = h.packedOffset + Math.floor(bit / 8)
    const word = blob[at]! | ((blob[at + 1] ?? 0) << 8)
    out[i] = h.centroids[(word >> bit % 8) & mask]!
  }
  for (let j = 0; j < h.outliers; j++) out[h.outlierIndex[j]!] = h.outlierValue[j]!
  return out
}
