// SPDX-License-Identifier: Apache-2.0
// IEEE 754 binary16 and bfloat16 to float32 conversion (Node 20 has no Float16Array).

let table: Float32Array | undefined

/** The value of one IEEE binary16 bit pattern. */
export function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >> 10) & 0x1f
  const frac = h & 0x3ff
  if (exp === 0) return sign * frac * 2 ** -24
  if (exp === 31) return frac === 0 ? sign * Infinity : NaN
  return sign * (1 + frac / 1024) * 2 ** (exp - 15)
}

/** float16 bit patterns (little-endian u16) to float32, through a 65536-entry table built once. */
export function halfToFloat(src: Uint16Array, dst: Float32Array = new Float32Array(src.length)): Float32Array {
  if (table === undefined) {
    table = new Float32Array(65536)
    for (let h = 0; h < 65536; h++) table[h] = halfValue(h)
  }
  const t = table
  for (let i = 0; i < src.length; i++) dst[i] = t[src[i]!]!
  return dst
}

/** bfloat16 bit patterns to float32 (the upper half of the float32 bits). */
export function bfloatToFloat(src: Uint16Array, dst: Float32Array = new Float32Array(src.length)): Float32Array {
  const bits = new Uint32Array(dst.buffer, dst.byteOffset, dst.length)
  for (let i = 0; i < src.length; i++) bits[i] = src[i]! << 16
  return dst
}
