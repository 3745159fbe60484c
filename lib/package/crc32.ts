// SPDX-License-Identifier: Apache-2.0
// CRC-32 (zlib/PNG polynomial 0xEDB88320) for package checksums: node:zlib's when Node has it
// (Node >= 20.15 / 22.2), else a table-driven fallback for the older Nodes package.json allows.
import * as zlib from 'node:zlib'

type Crc32 = (data: Uint8Array, value?: number) => number

let table: Uint32Array | undefined

function makeTable(): Uint32Array {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
}

/** The fallback: byte-at-a-time table CRC-32, continuing from `value` like zlib.crc32. */
export function crc32Table(data: Uint8Array, value = 0): number {
  table ??= makeTable()
  let c = ~value >>> 0
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

const native = (zlib as { crc32?: Crc32 }).crc32

/** Which implementation `crc32` uses: 'node:zlib' or 'table'. */
export const crc32Source: 'node:zlib' | 'table' = typeof native === 'function' ? 'node:zlib' : 'table'

/** CRC-32 of data, continuing from `value` (pass the previous result to checksum in chunks). */
export const crc32: Crc32 =
  /* c8 ignore next */ typeof native === 'function' ? (d, v = 0) => native(d, v) : crc32Table
