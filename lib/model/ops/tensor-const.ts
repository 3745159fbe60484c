// SPDX-License-Identifier: Apache-2.0
// Operators that produce tensors from attributes or scalars: Constant, ConstantOfShape, Range, EyeLike.
import { ModelFormatError } from '../../errors.js'
import { attrInt, attrTensor } from '../attrs.js'
import { dimCeilDiv, dimSub, isConcrete } from '../dims.js'
import { dtypeFromCode, isFloat, type DType } from '../dtype.js'
import type { Dim, Node, TensorData } from '../ir.js'
import { info, type OpContext, type OpDef } from './op-def.js'
import { input, knownDims, shapeError, unsupported, valueNeeded } from './op-util.js'
import { foldable, isIntType, maxFoldedValues } from './tensor-util.js'
import { halfValue } from '../half.js'

/** The elements of a host tensor as numbers (int64 through Number; bool as 0/1; float16 decoded). */
export function tensorNumbers(t: TensorData): number[] {
  if (t.dtype === 'float16') return Array.from(t.data as Uint16Array, halfValue)
  return Array.from(t.data as ArrayLike<number | bigint>, (v) => Number(v))
}

function scalarTensor(node: Node): TensorData | undefined {
  const v = node.attrs
  const f = v.get('value_float')
  if (typeof f === 'number') return { dtype: 'float32', dims: [], data: Float32Array.of(f) }
  const fs = v.get('value_floats')
  if (Array.isArray(fs)) return { dtype: 'float32', dims: [fs.length], data: Float32Array.from(fs as number[]) }
  const i = v.get('value_int')
  if (typeof i === 'number') return { dtype: 'int64', dims: [], data: BigInt64Array.of(BigInt(i)) }
  const is = v.get('value_ints')
  if (Array.isArray(is)) {
    return { dtype: 'int64', dims: [is.length], data: BigInt64Array.from(is as number[], (x) => BigInt(x)) }
  }
  return undefined
}

const constant: OpDef = {
  opType: 'Constant',
  infer(ctx) {
    const t = attrTensor(ctx.node, 'value') ?? scalarTensor(ctx.node)
    if (t === undefined) {
      const kinds = [...ctx.node.attrs.keys()].join(', ')
      throw unsupported(ctx, `only value, value_float(s) and value_int(s) are supported (got ${kinds || 'none'})`)
    }
    const n = t.data.length
    // float16 constants carry no values: the engine rebuilds host tensors from values by dtype.
    const values = n <= maxFoldedValues && t.dtype !== 'float16' ? tensorNumbers(t) : undefined
    return { outputs: [{ ...info(t.dtype, t.dims, values), tensor: t }] }
  },
}

/** ConstantOfShape's fill value: dtype and number (default float32 0). */
function fillValue(ctx: OpContext): { dtype: DType; value: number } {
  const t = attrTensor(ctx.node, 'value')
  if (t === undefined) return { dtype: 'float32', value: 0 }
  if (t.data.length !== 1) {
    throw new ModelFormatError(`node '${ctx.node.name}' (ConstantOfShape): value must hold one element`)
  }
  return { dtype: t.dtype, value: tensorNumbers(t)[0]! }
}

const constantOfShape: OpDef = {
  opType: 'ConstantOfShape',
  infer(ctx) {
    input(ctx, 0)
    const dims = knownDims(ctx, 0)
    if (dims === undefined) throw valueNeeded(ctx, 0, 'shape')
    for (const d of dims) if (isConcrete(d) && d < 0) throw shapeError(ctx, `shape entry ${d} is negative`)
    const { dtype, value } = fillValue(ctx)
    if (foldable(dtype, dims)) {
      const n = dims.reduce((p, d) => p * d, 1)
      return { outputs: [info(dtype, dims, new Array<number>(n).fill(value))] }
    }
    const ints = isFloat(dtype) ? [0] : [value]
    const floats = isFloat(dtype) ? [value] : [0]
    return { outputs: [info(dtype, dims)], kernel: () => ({ op: 'Fill', inputs: [], ints, floats }) }
  },
}

function scalarOf(ctx: OpContext, i: number, what: string): Dim {
  const v = knownDims(ctx, i)
  if (v === undefined || v.length !== 1) {
    throw valueNeeded(ctx, i, `${what} (a scalar)`)
  }
  return v[0]!
}

const range: OpDef = {
  opType: 'Range',
  infer(ctx) {
    const dtype = input(ctx, 0).dtype
    const start = scalarOf(ctx, 0, 'start')
    const limit = scalarOf(ctx, 1, 'limit')
    const delta = scalarOf(ctx, 2, 'delta')
    let n: Dim
    if (isConcrete(start) && isConcrete(limit) && isConcrete(delta)) {
      if (delta === 0) throw shapeError(ctx, 'delta is 0')
      n = Math.max(Math.ceil((limit - start) / delta), 0)
    } else if (isConcrete(delta) && delta > 0) {
      n = dimCeilDiv(dimSub(limit, start), delta)
    } else {
      throw unsupported(ctx, 'start, limit and delta must be numbers when delta is not a positive constant')
    }
    if (foldable(dtype, [n]) && isConcrete(start) && isConcrete(delta)) {
      return { outputs: [info(dtype, [n], Array.from({ length: n as number }, (_, i) => start + i * delta))] }
    }
    return {
      outputs: [info(dtype, [n])],
      kernel: () => {
        if (!isConcrete(start) || !isConcrete(delta)) throw unsupported(ctx, 'start and delta must be numbers')
        return { op: 'Range', inputs: [], ints: isIntType(dtype) ? [start, delta] : [0, 1], floats: [start, delta] }
      },
    }
  },
}

const eyeLike: OpDef = {
  opType: 'EyeLike',
  infer(ctx) {
    const x = input(ctx, 0)
    if (x.dims.length !== 2) throw shapeError(ctx, `input must have rank 2 (got ${x.dims.length})`)
    const code = attrInt(ctx.node, 'dtype', 0)
    const dtype = code === 0 ? x.dtype : dtypeFromCode(code)
    if (dtype === undefined) throw unsupported(ctx, `dtype ${code} is not supported`)
    const k = attrInt(ctx.node, 'k', 0)
    return { outputs: [info(dtype, x.dims)], kernel: () => ({ op: 'EyeLike', inputs: [], ints: [k], floats: [] }) }
  },
}

export const constOps: OpDef[] = [constant, constantOfShape, range, eyeLike]
