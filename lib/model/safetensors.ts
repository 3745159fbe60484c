// SPDX-License-Identifier: Apache-2.0
// Reads a safetensors file (Hugging Face's weight format) into float32 tensors.
//
// Format: u64 little-endian header length N, then N bytes of JSON
//   { "<name>": { "dtype": "F16", "shape": [..], "data_offsets": [begin, end] }, ..., "__metadata__": {..} }
// then the data region; offsets are relative to its start (8 + N). Every entry is checked: a known
// dtype, non-negative integer dims, end - begin = numel * dtype bytes, the range inside the file,
// ranges not overlapping. F32, F16 and BF16 become Float32Array; other dtypes are rejected by name.
import { readFile } from 'node:fs/promises'
import { ModelFormatError } from '../errors.js'
import { bfloatToFloat, halfToFloat } from './half.js'

export interface SafeTensor {
  readonly dims: readonly number[]
  readonly data: Float32Array
  /** dtype as stored ('F32', 'F16', 'BF16'). */
  readonly stored: string
}

/** Where a tensor's bytes are in the file (ONNX external data can point here). */
export interface SafeTensorEntry {
  readonly dtype: string
  readonly dims: readonly number[]
  /** Absolute file offset of the first byte. */
  readonly offset: number
  readonly length: number
}

const dtypeBytes: Readonly<Record<string, number>> = { F32: 4, F16: 2, BF16: 2 }
const headerMax = 100 << 20

/** Parses and checks the header of safetensors bytes; returns every tensor's location. */
export function safetensorsIndex(bytes: Uint8Array, label: string): Map<string, SafeTensorEntry> {
  const bad = (why: string): never => {
    throw new ModelFormatError(`${label}: not a valid safetensors file: ${why}; re-export the model (e.g. save_pretrained(safe_serialization=True))`)
  }
  if (bytes.length < 8) bad(`${bytes.length} bytes, shorter than the 8-byte header length`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const n = Number(view.getBigUint64(0, true))
  if (n < 2 || n > headerMax || 8 + n > bytes.length) bad(`header length ${n} does not fit the ${bytes.length}-byte file`)
  let header: unknown
  try {
    header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'))
  } catch (err) {
    bad(`the header is not JSON (${(err as Error).message})`)
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) bad('the header is not a JSON object')
  const base = 8 + n
  const out = new Map<string, SafeTensorEntry>()
  const spans: Array<[number, number, string]> = []
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown }
    if (e === null || typeof e !== 'object') bad(`entry '${name}' is not an object`)
    const size = typeof e.dtype === 'string' ? dtypeBytes[e.dtype] : undefined
    if (size === undefined) bad(`tensor '${name}' has dtype ${JSON.stringify(e.dtype)}; flexpipe reads F32, F16 and BF16`)
    const shape = e.shape
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) bad(`tensor '${name}' has shape ${JSON.stringify(shape)}`)
    const offs = e.data_offsets
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((d) => Number.isSafeInteger(d) && d >= 0) || offs[1] < offs[0]) {
      bad(`tensor '${name}' has data_offsets ${JSON.stringify(offs)}`)
    }
    const [b, end] = offs as [number, number]
    const count = (shape as number[]).reduce((a, d) => a * d, 1)
    if (end - b !== count * size!) bad(`tensor '${name}': data_offsets span ${end - b} bytes, shape ${JSON.stringify(shape)} needs ${count * size!}`)
    if (base + end > bytes.length) bad(`tensor '${name}' ends at byte ${base + end}, past the end of the ${bytes.length}-byte file (truncated?)`)
    spans.push([b, end, name])
    out.set(name, { dtype: e.dtype as string, dims: shape as number[], offset: base + b, length: end - b })
  }
  spans.sort((x, y) => x[0] - y[0])
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) bad(`tensors '${spans[i - 1]![2]}' and '${spans[i]![2]}' overlap`)
  }
  return out
}

/** Decodes one entry of the file's bytes to float32. */
export function decodeSafeTensor(bytes: Uint8Array, e: SafeTensorEntry): SafeTensor {
  const copy = bytes.slice(e.offset, e.offset + e.length) // aligned copy
  const count = e.dims.reduce((a, d) => a * d, 1)
  let data: Float32Array
  if (e.dtype === 'F32') data = new Float32Array(copy.buffer, 0, count)
  else if (e.dtype === 'F16') data = halfToFloat(new Uint16Array(copy.buffer, 0, count))
  else data = bfloatToFloat(new Uint16Array(copy.buffer, 0, count))
  return { dims: e.dims, data, stored: e.dtype }
}

/** Reads every tensor of a safetensors file as float32. */
export async function readSafetensors(path: string): Promise<Map<string, SafeTensor>> {
  const bytes = new Uint8Array(await readFile(path))
  const index = safetensorsIndex(bytes, path)
  return new Map([...index].map(([name, e]) => [name, decodeSafeTensor(bytes, e)]))
}
