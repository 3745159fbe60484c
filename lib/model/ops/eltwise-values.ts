// SPDX-License-Identifier: Apache-2.0
// Plan-time folding for elementwise ops: when every input's contents are known (shape arithmetic,
// small constants), the output's contents are computed here with numpy broadcasting, so shape
// subgraphs (Shape -> Gather -> Add -> Concat -> Reshape ...) fold even with symbolic dims.
import type { DType } from '../dtype.js'
import type { Dim, ValueInfo } from '../ir.js'
import { isConcrete } from '../dims.js'
import { knownCount } from './op-util.js'

/** Outputs with more elements than this are not folded. */
export const VALUES_LIMIT = 4096

export const FLOAT_DTYPES: readonly DType[] = ['float32', 'float64', 'float16']
export const INT_DTYPES: readonly DType[] = ['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']
export const NUMERIC_DTYPES: readonly DType[] = [...FLOAT_DTYPES, ...INT_DTYPES]
export const ALL_DTYPES: readonly DType[] = [...NUMERIC_DTYPES, 'bool']

export function isInt(d: DType): boolean {
  return INT_DTYPES.includes(d)
}

/** Row-major strides of `dims` seen through broadcasting at `out` (0 where broadcast). */
function broadcastStrides(dims: readonly number[], out: readonly number[]): number[] {
  const strides = new Array<number>(out.length).fill(0)
  let s = 1
  for (let i = dims.length - 1; i >= 0; i--) {
    const o = out.length - dims.length + i
    const d = dims[i] ?? 1
    if (d !== 1 && o >= 0) strides[o] = s
    s *= d
  }
  return strides
}

/** Known contents of v with concrete dims that agree with them, else undefined. */
function contents(v: ValueInfo): { values: readonly Dim[]; dims: number[] } | undefined {
  const values = v.values
  if (values === undefined || !v.dims.every(isConcrete)) return undefined
  const dims = v.dims as number[]
  if (knownCount(dims) !== values.length) return undefined
  return { values, dims }
}

/**
 * The output contents of an elementwise op: fn applied to the broadcast input contents. Undefined
 * when an input's contents are unknown, the output dims are not concrete or exceed VALUES_LIMIT
 * elements, or fn gives undefined for some element.
 */
export function foldValues(
  inputs: readonly ValueInfo[],
  outDims: readonly Dim[],
  fn: (xs: readonly Dim[]) => Dim | undefined,
): Dim[] | undefined {
  const n = knownCount(outDims)
  if (n === undefined || n > VALUES_LIMIT) return undefined
  const out = outDims as number[]
  const known = inputs.map(contents)
  const all = known.filter((k) => k !== undefined)
  if (all.length !== inputs.length) return undefined
  const strides = all.map((k) => broadcastStrides(k.dims, out))
  const result: Dim[] = []
  const xs: Dim[] = new Array<Dim>(all.length)
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < all.length; k++) {
      let rem = i
      let off = 0
      const st = strides[k] as number[]
      for (let d = out.length - 1; d >= 0; d--) {
        const size = out[d] as number
        off += (rem % size) * (st[d] as number)
        rem = Math.floor(rem / size)
      }
      xs[k] = (all[k] as { values: readonly Dim[] }).values[off] as Dim
    }
    const r = fn(xs)
    if (r === undefined) return undefined
    result.push(r)
  }
  return result
}

const wrapArrays: Partial<Record<DType, { of(...v: number[]): ArrayLike<number> }>> = {
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
}

/**
 * A computed element as a value of dtype: float32 rounds, narrow integers wrap, bool is 0/1.
 * Symbolic elements survive only in integer dtypes; float16 is never folded.
 */
export function normalize(dtype: DType, v: Dim | undefined): Dim | undefined {
  if (v === undefined) return undefined
  if (!isConcrete(v)) return isInt(dtype) ? v : undefined
  if (dtype === 'bool') return v !== 0 ? 1 : 0
  if (dtype === 'float32') return Math.fround(v)
  if (dtype === 'float64') return v
  if (dtype === 'float16') return undefined
  if (!Number.isFinite(v)) return undefined
  const arr = wrapArrays[dtype]
  if (arr !== undefined) return arr.of(Math.trunc(v))[0] as number
  return Math.trunc(v)
}

/** fn on concrete numbers only. */
export function numeric(fn: (...xs: number[]) => number): (...xs: Dim[]) => Dim | undefined {
  return (...xs: Dim[]) => (xs.every(isConcrete) ? fn(...(xs as number[])) : undefined)
}
