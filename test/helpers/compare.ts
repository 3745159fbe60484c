// SPDX-License-Identifier: Apache-2.0
// Tolerance comparison of tensors: max |ours - want| <= atol + rtol * |want| per element, NaN = NaN.
import type { Tensor } from '../../lib/index.js'

export interface Mismatch {
  readonly index: number
  readonly got: number
  readonly want: number
}

export interface CompareResult {
  readonly ok: boolean
  readonly reason?: string
  readonly maxAbsDiff: number
  readonly first?: Mismatch
}

export function compareTensors(got: Tensor, want: Tensor, atol: number, rtol: number): CompareResult {
  if (got.dims.length !== want.dims.length || got.dims.some((d, i) => d !== want.dims[i])) {
    return { ok: false, reason: `dims [${got.dims.join(', ')}] != expected [${want.dims.join(', ')}]`, maxAbsDiff: Infinity }
  }
  const g = Array.from(got.data as ArrayLike<number | bigint>, Number)
  const w = Array.from(want.data as ArrayLike<number | bigint>, Number)
  let maxAbsDiff = 0
  let first: Mismatch | undefined
  for (let i = 0; i < w.length; i++) {
    const a = g[i]!
    const b = w[i]!
    if (Number.isNaN(a) && Number.isNaN(b)) continue
    if (a === b) continue
    const d = Math.abs(a - b)
    if (!(d <= atol + rtol * Math.abs(b))) first ??= { index: i, got: a, want: b }
    if (d > maxAbsDiff || Number.isNaN(d)) maxAbsDiff = Number.isNaN(d) ? Infinity : d
  }
  if (first !== undefined) {
    return { ok: false, reason: `element ${first.index}: got ${first.got}, expected ${first.want} (max |diff| ${maxAbsDiff})`, maxAbsDiff, first }
  }
  return { ok: true, maxAbsDiff }
}

/** The tolerance the conformance tests use against onnxruntime: 1e-4 * max|ort| + 1e-5. */
export function maxAbs(t: Tensor): number {
  let m = 0
  for (const x of Array.from(t.data as ArrayLike<number | bigint>)) m = Math.max(m, Math.abs(Number(x)))
  return m
}
