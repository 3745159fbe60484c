// SPDX-License-Identifier: Apache-2.0
// Binary PPM (P6) images to NCHW float32 tensors, for the CLI and the OCR demo.
import { readFile } from 'node:fs/promises'
import { ArgumentError } from '../errors.js'
import { tensor, type Tensor } from '../model/tensor.js'

export interface Image {
  readonly width: number
  readonly height: number
  readonly rgb: Uint8Array // height * width * 3
}

export function parsePpm(bytes: Uint8Array, what: string): Image {
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.length, 64)))
  const m = /^P6\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(text)
  if (!m) throw new ArgumentError(`${what}: not a binary PPM (P6) image`)
  const width = Number(m[1])
  const height = Number(m[2])
  const start = m[0].length
  if (Number(m[3]) !== 255 || bytes.length < start + width * height * 3) {
    throw new ArgumentError(`${what}: expected 8-bit PPM data of ${width}x${height} pixels`)
  }
  return { width, height, rgb: bytes.subarray(start, start + width * height * 3) }
}

export async function readPpm(path: string): Promise<Image> {
  return parsePpm(await readFile(path), path)
}

/** [1, 3, H, W] float32 with (pixel / 255 - mean) / std per channel, optionally rotated 180°. */
export function imageTensor(img: Image, mean = [0.5, 0.5, 0.5], std = [0.5, 0.5, 0.5], rotate180 = false): Tensor {
  const { width: w, height: h } = img
  const t = tensor('float32', [1, 3, h, w])
  const data = t.data as Float32Array
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const src = rotate180 ? (h - 1 - y) * w + (w - 1 - x) : y * w + x
      for (let c = 0; c < 3; c++) data[c * h * w + y * w + x] = (img.rgb[src * 3 + c]! / 255 - mean[c]!) / std[c]!
    }
  }
  return t
}
