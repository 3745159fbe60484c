// SPDX-License-Identifier: Apache-2.0
// Storage forms of a constant: 'raw' (as in the model) or a prepack transform ('#gemm_pack_b(1)',
// '#winograd_f63_filter()' ...). Their shapes and sizes follow native/runtime/prepack.h, computed here
// without running the transform, so prepare can plan before it transforms anything.
import { dtypeBytes, type DType } from './dtype.js'
import { numel } from './ir.js'

export interface FormShape {
  readonly dtype: DType
  readonly dims: number[]
}

/** Parses '#transform(i,j)' into the transform name and ints; undefined for 'raw'. */
export function parseFormKey(form: string): { transform: string; ints: number[] } | undefined {
  if (form === 'raw') return undefined
  const m = /^#([a-z0-9_]+)\(([-0-9,]*)\)$/.exec(form)
  if (m === null) throw new Error(`unknown form '${form}'`)
  return { transform: m[1]!, ints: m[2] === '' ? [] : m[2]!.split(',').map(Number) }
}

/** The shape of a constant of `dtype`/`dims` in `form`, for this build's GEMM panel width `nr`. */
export function formShape(dtype: DType, dims: readonly number[], form: string, nr: number): FormShape | undefined {
  const p = parseFormKey(form)
  if (p === undefined) return { dtype, dims: dims.slice() }
  const winograd = (a2: number): FormShape => ({ dtype: 'float32', dims: [Math.ceil(dims[0]! / 16), a2, dims[1]!, 16] })
  switch (p.transform) {
    case 'winograd_f63_filter':
      return winograd(64)
    case 'winograd_f23_filter':
      return winograd(16)
    case 'conv_narrow_filter': // [M, C, kernel...] -> 16-channel panels [ceil(M / 16), C * kernel volume (or window taps), 16]
      return { dtype: 'float32', dims: [Math.ceil(dims[0]! / 16), perChannel(dims, p.ints), 16] }
    case 'conv_taps_filter': // [M, C, KH, KW] -> [KH * KW (or window taps), M, C]
      return { dtype: 'float32', dims: [p.ints.length === 4 ? windowTaps(p.ints) : dims[2]! * dims[3]!, dims[0]!, dims[1]!] }
    case 'conv_window': // [M, C, KH, KW] -> [M, C, ky1 - ky0, kx1 - kx0]
      return { dtype: 'float32', dims: [dims[0]!, dims[1]!, p.ints[1]! - p.ints[0]!, p.ints[3]! - p.ints[2]!] }
    case 'grouped_filter': // [M, C / group, kh, kw] -> [group, C / group * kh * kw (or window taps), M / group]
      return { dtype: 'float32', dims: [p.ints[0]!, perChannel(dims, p.ints.slice(1)), dims[0]! / p.ints[0]!] }
    case 'gemm_pack_b': {
      const transposed = p.ints[0] === 1
      const k = transposed ? dims[1]! : dims[0]!
      const n = transposed ? dims[0]! : dims[1]!
      return { dtype: 'float32', dims: [Math.ceil(n / nr), k, nr] }
    }
    default:
      return undefined
  }
}

/** Taps of a window [ky0, ky1, kx0, kx1]. */
function windowTaps(w: readonly number[]): number {
  return (w[1]! - w[0]!) * (w[3]! - w[2]!)
}

/** Floats per output channel of a conv filter, or of its tap window [ky0, ky1, kx0, kx1] when given. */
function perChannel(dims: readonly number[], window: readonly number[]): number {
  return window.length === 4 ? dims[1]! * windowTaps(window) : numel(dims) / dims[0]!
}

export function formBytes(s: FormShape): number {
  return numel(s.dims) * dtypeBytes(s.dtype)
}
