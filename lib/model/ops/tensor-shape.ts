// SPDX-License-Identifier: Apache-2.0
// Shape-only operators: Reshape, Flatten, Squeeze, Unsqueeze, Identity (aliases of their input),
// and Shape and Size (whose outputs are always known values).
import { attrInt, attrInts } from '../attrs.js'
import { dimProduct, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import { info, type OpContext, type OpDef, type OpResult } from './op-def.js'
import { input, knownDims, shapeError, valueNeeded } from './op-util.js'
import { axesArg, axesOf, dimsQuotient } from './tensor-util.js'

/** Output 0 aliases input 0 with new dims; values (same flat order) pass through. */
function alias(ctx: OpContext, dims: readonly Dim[]): OpResult {
  const x = input(ctx, 0)
  return { outputs: [info(x.dtype, dims, x.values)], aliasOf: 0 }
}

function sameCount(a: readonly Dim[], b: readonly Dim[]): boolean {
  const x = dimProduct(a)
  const y = dimProduct(b)
  return !isConcrete(x) || !isConcrete(y) || x === y
}

function reshapeDims(ctx: OpContext, inDims: readonly Dim[], shape: readonly Dim[], allowZero: boolean): Dim[] {
  const out = shape.map((s, i): Dim => {
    if (s !== 0 || allowZero) return s
    const d = inDims[i]
    if (d === undefined) throw shapeError(ctx, `shape entry ${i} is 0 but the input has rank ${inDims.length}`)
    return d
  })
  const free = out.flatMap((d, i) => (d === -1 ? [i] : []))
  if (free.length > 1) throw shapeError(ctx, `shape [${shape.join(', ')}] has more than one -1`)
  for (const d of out) {
    if (isConcrete(d) && (d < -1 || !Number.isInteger(d))) throw shapeError(ctx, `shape entry ${d} is invalid`)
  }
  const at = free[0]
  if (at !== undefined) {
    const known = out.filter((_, i) => i !== at)
    const p = dimProduct(known)
    const total = dimProduct(inDims)
    if (isConcrete(p) && isConcrete(total) && (p === 0 || total % p !== 0)) {
      throw shapeError(ctx, `cannot reshape [${inDims.join(', ')}] to [${shape.join(', ')}]`)
    }
    out[at] = dimsQuotient(inDims, known)
  } else if (!sameCount(inDims, out)) {
    throw shapeError(ctx, `cannot reshape [${inDims.join(', ')}] to [${shape.join(', ')}]`)
  }
  return out
}

const reshape: OpDef = {
  opType: 'Reshape',
  infer(ctx) {
    const x = input(ctx, 0)
    let shape: readonly Dim[] | undefined
    if (ctx.opset < 5) shape = attrInts(ctx.node, 'shape')
    else {
      input(ctx, 1)
      shape = knownDims(ctx, 1)
    }
    if (shape === undefined) {
      throw valueNeeded(ctx, 1, 'shape')
    }
    const allowZero = ctx.opset >= 14 && attrInt(ctx.node, 'allowzero', 0) !== 0
    return alias(ctx, reshapeDims(ctx, x.dims, shape, allowZero))
  },
}

const flatten: OpDef = {
  opType: 'Flatten',
  infer(ctx) {
    const x = input(ctx, 0)
    const r = x.dims.length
    const raw = attrInt(ctx.node, 'axis', 1)
    const axis = raw < 0 ? raw + r : raw
    if (axis < 0 || axis > r) throw shapeError(ctx, `axis ${raw} is out of range for rank ${r}`)
    return alias(ctx, [dimProduct(x.dims.slice(0, axis)), dimProduct(x.dims.slice(axis))])
  },
}

const squeeze: OpDef = {
  opType: 'Squeeze',
  infer(ctx) {
    const x = input(ctx, 0)
    const given = axesArg(ctx, 13)
    if (given === undefined) return alias(ctx, x.dims.filter((d) => d !== 1))
    const axes = axesOf(ctx, given, x.dims.length)
    for (const a of axes) {
      const d = x.dims[a]!
      if (isConcrete(d) && d !== 1) throw shapeError(ctx, `cannot squeeze axis ${a} of size ${d}`)
    }
    return alias(ctx, x.dims.filter((_, i) => !axes.includes(i)))
  },
}

const unsqueeze: OpDef = {
  opType: 'Unsqueeze',
  infer(ctx) {
    const x = input(ctx, 0)
    const given = axesArg(ctx, 13)
    if (given === undefined) throw shapeError(ctx, 'axes are required')
    const rank = x.dims.length + given.length
    const axes = axesOf(ctx, given, rank)
    const out: Dim[] = []
    let j = 0
    for (let i = 0; i < rank; i++) out.push(axes.includes(i) ? 1 : x.dims[j++]!)
    return alias(ctx, out)
  },
}

const identity: OpDef = {
  opType: 'Identity',
  infer(ctx) {
    return alias(ctx, input(ctx, 0).dims)
  },
}

const shapeOp: OpDef = {
  opType: 'Shape',
  infer(ctx) {
    const dims = input(ctx, 0).dims
    const r = dims.length
    const clamp = (v: number): number => Math.min(Math.max(v < 0 ? v + r : v, 0), r)
    const start = ctx.opset >= 15 ? clamp(attrInt(ctx.node, 'start', 0)) : 0
    const end = ctx.opset >= 15 ? clamp(attrInt(ctx.node, 'end', r)) : r
    const values = dims.slice(start, Math.max(start, end))
    return { outputs: [info('int64', [values.length], values)] }
  },
}

const size: OpDef = {
  opType: 'Size',
  infer(ctx) {
    return { outputs: [info('int64', [], [dimProduct(input(ctx, 0).dims)])] }
  },
}

export const shapeOps: OpDef[] = [reshape, flatten, squeeze, unsqueeze, identity, shapeOp, size]
