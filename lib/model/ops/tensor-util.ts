// SPDX-License-Identifier: Apache-2.0
// Helpers for the tensor op group: axes, value folding on small integer tensors, symbolic reshape.
import { ModelFormatError } from '../../errors.js'
import { attrInts } from '../attrs.js'
import { dimDiv, dimMul, isConcrete } from '../dims.js'
import type { DType } from '../dtype.js'
import type { Dim, ValueInfo } from '../ir.js'
import type { OpContext } from './op-def.js'
import { knownCount, requireNumbers, shapeError } from './op-util.js'

/** Outputs with at most this many elements get `values` when their inputs have them. */
export const maxFoldedValues = 4096

const intTypes: ReadonlySet<DType> = new Set<DType>([
  'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'bool',
])

export function isIntType(d: DType): boolean {
  return intTypes.has(d)
}

/** Whether an output of this dtype and dims should carry folded values. */
export function foldable(dtype: DType, dims: readonly Dim[]): dims is readonly number[] {
  const n = knownCount(dims)
  return isIntType(dtype) && n !== undefined && n <= maxFoldedValues
}

/** Values of input i when it is present and they are known. */
export function valuesOf(ctx: OpContext, i: number): readonly Dim[] | undefined {
  return ctx.inputs[i]?.values
}

/** Resolve one axis against rank (negative counts from the end); a bad axis is a shape error. */
export function axisOf(ctx: OpContext, axis: number, rank: number, what = 'axis'): number {
  const a = axis < 0 ? axis + rank : axis
  if (!Number.isInteger(a) || a < 0 || a >= rank) {
    throw shapeError(ctx, `${what} ${axis} is out of range for rank ${rank}`)
  }
  return a
}

/** Resolve a list of axes against rank; duplicates are a shape error. Returns them sorted. */
export function axesOf(ctx: OpContext, axes: readonly number[], rank: number): number[] {
  const out = axes.map((a) => axisOf(ctx, a, rank))
  if (new Set(out).size !== out.length) throw shapeError(ctx, `axes [${axes.join(', ')}] repeat an axis`)
  return out.sort((a, b) => a - b)
}

/**
 * Axes given either as an attribute (before `inputSince`) or as input `index` (from that opset on).
 * Returns undefined when neither is given.
 */
export function axesArg(ctx: OpContext, inputSince: number, index = 1): number[] | undefined {
  if (ctx.opset < inputSince) return attrInts(ctx.node, 'axes')
  if (ctx.inputs[index] === undefined) return undefined
  return requireNumbers(ctx, index, 'axes')
}

export function stridesOf(dims: readonly number[]): number[] {
  const s = new Array<number>(dims.length)
  let n = 1
  for (let k = dims.length - 1; k >= 0; k--) {
    s[k] = n
    n *= dims[k] ?? 1
  }
  return s
}

/** Row-major walk over dims: calls fn(coord) for every element and collects the results. */
export function mapCoords(dims: readonly number[], fn: (coord: readonly number[]) => Dim): Dim[] {
  const n = dims.reduce((p, d) => p * d, 1)
  const out: Dim[] = []
  const coord = new Array<number>(dims.length).fill(0)
  for (let i = 0; i < n; i++) {
    out.push(fn(coord))
    for (let k = dims.length - 1; k >= 0; k--) {
      coord[k] = (coord[k] ?? 0) + 1
      if (coord[k]! < dims[k]!) break
      coord[k] = 0
    }
  }
  return out
}

/** Element at coord of a row-major value list with the given dims. */
export function valueAt(values: readonly Dim[], dims: readonly number[], coord: readonly number[]): Dim {
  let i = 0
  for (let k = 0; k < dims.length; k++) i = i * dims[k]! + coord[k]!
  const v = values[i]
  if (v === undefined) throw new ModelFormatError(`value index ${i} is outside a tensor of ${values.length} values`)
  return v
}

/** A known dims list as numbers (values only exist for tensors whose dims are concrete). */
export function numericDims(v: ValueInfo): number[] | undefined {
  return v.dims.every(isConcrete) ? (v.dims as number[]) : undefined
}

// --- symbolic products, for Reshape's -1 --------------------------------------------------------

interface Factors {
  num: number
  syms: string[]
}

function stripParens(s: string): string {
  if (!s.startsWith('(') || !s.endsWith(')')) return s
  let depth = 0
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++
    else if (s[i] === ')') depth--
    if (depth === 0 && i < s.length - 1) return s
  }
  return s.slice(1, -1)
}

/** Split a dim into a number and symbolic factors at top-level '*'. */
function factorsOf(d: Dim, into: Factors): void {
  if (isConcrete(d)) {
    into.num *= d
    return
  }
  let depth = 0
  let start = 0
  const parts: string[] = []
  for (let i = 0; i < d.length; i++) {
    const ch = d[i]
    if (ch === '(') depth++
    else if (ch === ')') depth--
    else if (ch === '*' && depth === 0) {
      parts.push(d.slice(start, i))
      start = i + 1
    }
  }
  parts.push(d.slice(start))
  for (const p of parts) {
    if (/^\d+$/.test(p)) into.num *= Number(p)
    else into.syms.push(stripParens(p))
  }
}

/** The product of `total` divided by the product of `part`, cancelling symbols where possible. */
export function dimsQuotient(total: readonly Dim[], part: readonly Dim[]): Dim {
  const t: Factors = { num: 1, syms: [] }
  const p: Factors = { num: 1, syms: [] }
  for (const d of total) factorsOf(d, t)
  for (const d of part) factorsOf(d, p)
  const rest = t.syms.slice()
  for (const s of p.syms) {
    const i = rest.indexOf(s)
    if (i < 0) return dimDiv(rebuild(t), rebuild(p))
    rest.splice(i, 1)
  }
  if (p.num === 0 || t.num % p.num !== 0) return dimDiv(rebuild(t), rebuild(p))
  return rebuild({ num: t.num / p.num, syms: rest })
}

function rebuild(f: Factors): Dim {
  const syms = f.syms.reduce<Dim>((acc, s) => dimMul(acc, s), 1)
  return dimMul(syms, f.num)
}
