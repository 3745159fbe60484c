// SPDX-License-Identifier: Apache-2.0
// Index-driven and pattern operators: Gather, GatherElements, GatherND, ScatterND, OneHot, Pad, Trilu, CumSum.
import { attrFloat, attrInt, attrInts, attrString } from '../attrs.js'
import { dimAdd, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import { info, type OpContext, type OpDef } from './op-def.js'
import { input, knownNumbers, requireNumbers, shapeError, unsupported } from './op-util.js'
import { axisOf, foldable, mapCoords, numericDims, valueAt } from './tensor-util.js'

function checkIndices(ctx: OpContext, indices: readonly number[], dim: Dim): void {
  if (!isConcrete(dim)) return
  for (const i of indices) {
    if (i < -dim || i >= dim) throw shapeError(ctx, `index ${i} is out of range for a dim of ${dim}`)
  }
}

function requireIndexType(ctx: OpContext, i: number): void {
  const t = input(ctx, i).dtype
  if (t !== 'int32' && t !== 'int64') throw shapeError(ctx, `indices must be int32 or int64 (got ${t})`)
}

const gather: OpDef = {
  opType: 'Gather',
  infer(ctx) {
    const x = input(ctx, 0)
    const idx = input(ctx, 1)
    requireIndexType(ctx, 1)
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', 0), x.dims.length)
    const dims = [...x.dims.slice(0, axis), ...idx.dims, ...x.dims.slice(axis + 1)]
    const n = x.dims[axis]!
    const known = knownNumbers(ctx, 1)
    if (known !== undefined) checkIndices(ctx, known, n)
    const xd = numericDims(x)
    if (x.values !== undefined && xd !== undefined && known !== undefined && foldable(x.dtype, dims)) {
      const q = idx.dims.length
      const values = mapCoords(dims, (c) => {
        const flat = c.slice(axis, axis + q).reduce((p, v, k) => p * (idx.dims[k] as number) + v, 0)
        const j = known[flat]!
        return valueAt(x.values!, xd, [...c.slice(0, axis), j < 0 ? j + xd[axis]! : j, ...c.slice(axis + q)])
      })
      return { outputs: [info(x.dtype, dims, values)] }
    }
    return {
      outputs: [info(x.dtype, dims)],
      kernel: () => ({ op: 'Gather', inputs: [0, 1], ints: [axis], floats: [] }),
    }
  },
}

const gatherElements: OpDef = {
  opType: 'GatherElements',
  infer(ctx) {
    const x = input(ctx, 0)
    const idx = input(ctx, 1)
    requireIndexType(ctx, 1)
    if (idx.dims.length !== x.dims.length) throw shapeError(ctx, 'indices must have the rank of data')
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', 0), x.dims.length)
    const known = knownNumbers(ctx, 1)
    if (known !== undefined) checkIndices(ctx, known, x.dims[axis]!)
    return {
      outputs: [info(x.dtype, idx.dims)],
      kernel: () => ({ op: 'GatherElements', inputs: [0, 1], ints: [axis], floats: [] }),
    }
  },
}

const gatherND: OpDef = {
  opType: 'GatherND',
  infer(ctx) {
    const x = input(ctx, 0)
    const idx = input(ctx, 1)
    requireIndexType(ctx, 1)
    const b = attrInt(ctx.node, 'batch_dims', 0)
    const q = idx.dims.length
    const m = idx.dims[q - 1]
    if (q < 1 || m === undefined || !isConcrete(m)) throw unsupported(ctx, 'the last dim of indices must be known')
    if (b < 0 || b >= q || b + m > x.dims.length) throw shapeError(ctx, `batch_dims ${b} and depth ${m} do not fit`)
    const dims = [...idx.dims.slice(0, q - 1), ...x.dims.slice(b + m)]
    return {
      outputs: [info(x.dtype, dims)],
      kernel: () => ({ op: 'GatherND', inputs: [0, 1], ints: [b], floats: [] }),
    }
  },
}

const oneHot: OpDef = {
  opType: 'OneHot',
  infer(ctx) {
    const idx = input(ctx, 0)
    input(ctx, 1)
    const values = input(ctx, 2)
    const depthValues = requireNumbers(ctx, 1, 'depth')
    const depth = Math.trunc(depthValues[0] ?? 0)
    if (depthValues.length !== 1 || depth < 1) throw shapeError(ctx, `depth must be one positive number`)
    const rank = idx.dims.length + 1
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', -1), rank)
    const dims = [...idx.dims.slice(0, axis), depth, ...idx.dims.slice(axis)]
    return {
      outputs: [info(values.dtype, dims)],
      kernel: () => ({ op: 'OneHot', inputs: [0, 2], ints: [axis, depth], floats: [] }),
    }
  },
}

const padModes: Readonly<Record<string, number>> = { constant: 0, reflect: 1, edge: 2, wrap: 3 }

function padArgs(ctx: OpContext, rank: number): { pads: number[]; value: number; valueInput: number } {
  if (ctx.opset < 11) {
    const pads = attrInts(ctx.node, ctx.opset < 2 ? 'paddings' : 'pads', [])
    return { pads, value: attrFloat(ctx.node, 'value', 0), valueInput: -1 }
  }
  input(ctx, 1)
  const given = requireNumbers(ctx, 1, 'pads')
  const hasValue = ctx.inputs[2] !== undefined
  const value = hasValue ? (knownNumbers(ctx, 2)?.[0] ?? 0) : 0
  if (ctx.inputs[3] === undefined) return { pads: given, value, valueInput: hasValue ? 2 : -1 }
  const axes = requireNumbers(ctx, 3, 'axes').map((a) => axisOf(ctx, a, rank))
  if (given.length !== 2 * axes.length) {
    throw shapeError(ctx, `pads has ${given.length} entries for ${axes.length} axes`)
  }
  const pads = new Array<number>(2 * rank).fill(0)
  axes.forEach((a, i) => {
    pads[a] = given[i]!
    pads[rank + a] = given[axes.length + i]!
  })
  return { pads, value, valueInput: hasValue ? 2 : -1 }
}

const pad: OpDef = {
  opType: 'Pad',
  infer(ctx) {
    const x = input(ctx, 0)
    const r = x.dims.length
    const modeName = attrString(ctx.node, 'mode', 'constant')
    const mode = padModes[modeName]
    if (mode === undefined) throw unsupported(ctx, `mode '${modeName}'`)
    const { pads, value, valueInput } = padArgs(ctx, r)
    if (pads.length !== 2 * r) throw shapeError(ctx, `pads has ${pads.length} entries for rank ${r}`)
    const dims = x.dims.map((d, k) => dimAdd(dimAdd(d, pads[k]!), pads[r + k]!))
    for (const d of dims) if (isConcrete(d) && d < 0) throw shapeError(ctx, `pads make a negative dim`)
    return {
      outputs: [info(x.dtype, dims)],
      kernel: () => ({ op: 'Pad', inputs: [0, valueInput], ints: [mode, ...pads], floats: [value] }),
    }
  },
}

const trilu: OpDef = {
  opType: 'Trilu',
  infer(ctx) {
    const x = input(ctx, 0)
    if (x.dims.length < 2) throw shapeError(ctx, `input must have rank >= 2 (got ${x.dims.length})`)
    // k does not change the output dims: when it is not known before the run the kernel reads it.
    const known = ctx.inputs[1] ? knownNumbers(ctx, 1) : [0]
    const k = known?.[0] ?? 0
    const upper = attrInt(ctx.node, 'upper', 1) !== 0 ? 1 : 0
    const inputs = known === undefined ? [0, 1] : [0]
    return { outputs: [info(x.dtype, x.dims)], kernel: () => ({ op: 'Trilu', inputs, ints: [upper, k], floats: [] }) }
  },
}

const cumSum: OpDef = {
  opType: 'CumSum',
  infer(ctx) {
    const x = input(ctx, 0)
    input(ctx, 1)
    // The axis does not change the output dims: when it is not known before the run the kernel reads it.
    const known = knownNumbers(ctx, 1)
    const axis = known === undefined ? 0 : axisOf(ctx, known[0] ?? 0, x.dims.length)
    const exclusive = attrInt(ctx.node, 'exclusive', 0) !== 0 ? 1 : 0
    const reverse = attrInt(ctx.node, 'reverse', 0) !== 0 ? 1 : 0
    const inputs = known === undefined ? [0, 1] : [0]
    return {
      outputs: [info(x.dtype, x.dims)],
      kernel: () => ({ op: 'CumSum', inputs, ints: [axis, exclusive, reverse], floats: [] }),
    }
  },
}

/** ScatterND's reduction attribute (opset 16) as the native ScatterReduction code (opset 18's max and min are not supported). */
const scatterReductions: Readonly<Record<string, number>> = { none: 0, add: 1, mul: 2 }

/**
 * ScatterND: data with the slices at indices[..., :] replaced by (or, with a reduction, combined with)
 * updates. Indices outside their dim are the native op's typed error at run time.
 */
const scatterND: OpDef = {
  opType: 'ScatterND',
  infer(ctx) {
    const x = input(ctx, 0)
    const idx = input(ctx, 1)
    const upd = input(ctx, 2)
    requireIndexType(ctx, 1)
    const reduction = attrString(ctx.node, 'reduction', 'none')
    const code = scatterReductions[reduction]
    if (code === undefined) throw unsupported(ctx, `reduction '${reduction}' (expected none, add or mul)`)
    if (code !== 0 && !['float32', 'float64', 'int32', 'int64'].includes(x.dtype)) throw unsupported(ctx, `reduction '${reduction}' on ${x.dtype}`)
    if (upd.dtype !== x.dtype) throw shapeError(ctx, `updates are ${upd.dtype}, data is ${x.dtype}`)
    const q = idx.dims.length
    const m = idx.dims[q - 1]
    if (q < 1 || m === undefined || !isConcrete(m)) throw unsupported(ctx, 'the last dim of indices must be known')
    if (m < 1 || m > x.dims.length) throw shapeError(ctx, `index depth ${m} does not fit data of rank ${x.dims.length}`)
    const want = [...idx.dims.slice(0, q - 1), ...x.dims.slice(m)]
    const sameDim = (a: Dim | undefined, b: Dim | undefined): boolean => a === b || !isConcrete(a!) || !isConcrete(b!)
    if (upd.dims.length !== want.length || want.some((d, i) => !sameDim(d, upd.dims[i]))) {
      throw shapeError(ctx, `updates must have dims [${want.join(', ')}] (got [${upd.dims.join(', ')}])`)
    }
    return {
      outputs: [info(x.dtype, x.dims)],
      kernel: () => ({ op: 'ScatterND', inputs: [0, 1, 2], ints: [code], floats: [] }),
    }
  },
}

export const indexOps: OpDef[] = [gather, gatherElements, gatherND, scatterND, oneHot, pad, trilu, cumSum]
