// SPDX-License-Identifier: Apache-2.0
// Reductions (ReduceSum ... ReduceLogSumExp over any axes, keepdims, noop_with_empty_axes) and ArgMax/ArgMin.
import { attrInt } from '../attrs.js'
import { dimAdd, dimMul, isConcrete } from '../dims.js'
import type { DType } from '../dtype.js'
import type { Dim } from '../ir.js'
import { info, type OpContext, type OpDef, type OpResult } from './op-def.js'
import { input, unsupported } from './op-util.js'
import { axesArg, axesOf, axisOf, foldable, mapCoords, numericDims, valueAt } from './tensor-util.js'

const reduceTypes: ReadonlySet<DType> = new Set<DType>(['float32', 'float64', 'int32', 'int64'])

/** ONNX op type -> native kind (see op_reduce) and the opset where axes became an input. */
const kinds: ReadonlyArray<readonly [string, number, number]> = [
  ['ReduceSum', 0, 13],
  ['ReduceMean', 1, 18],
  ['ReduceMax', 2, 18],
  ['ReduceMin', 3, 18],
  ['ReduceProd', 4, 18],
  ['ReduceL1', 5, 18],
  ['ReduceL2', 6, 18],
  ['ReduceLogSum', 7, 18],
  ['ReduceLogSumExp', 8, 18],
  ['ReduceSumSquare', 9, 18],
]

type Fold = (acc: Dim, v: Dim) => Dim | undefined

/** Value folding for the integer reductions that shape computations use. */
const folds: Readonly<Record<number, Fold>> = {
  0: (a, v) => dimAdd(a, v),
  4: (a, v) => dimMul(a, v),
  2: (a, v) => (isConcrete(a) && isConcrete(v) ? Math.max(a, v) : undefined),
  3: (a, v) => (isConcrete(a) && isConcrete(v) ? Math.min(a, v) : undefined),
}

function foldReduce(ctx: OpContext, kind: number, flags: boolean[], dims: readonly Dim[]): Dim[] | undefined {
  const x = input(ctx, 0)
  const xd = numericDims(x)
  const fold = folds[kind]
  if (fold === undefined || x.values === undefined || xd === undefined || !foldable(x.dtype, dims)) return undefined
  const keptDims = xd.map((d, k) => (flags[k] ? 1 : d))
  const redDims = xd.map((d, k) => (flags[k] ? d : 1))
  const out: Dim[] = []
  for (const base of mapCoords(keptDims, (c) => c.join(','))) {
    const b = String(base).split(',').map(Number)
    let acc: Dim | undefined
    for (const v of mapCoords(redDims, (c) => valueAt(x.values!, xd, c.map((r, k) => (flags[k] ? r : b[k]!))))) {
      acc = acc === undefined ? v : fold(acc, v)
      if (acc === undefined) return undefined
    }
    if (acc === undefined) acc = kind === 4 ? 1 : 0
    out.push(acc)
  }
  return out
}

function reduceDef(opType: string, kind: number, axesInputSince: number): OpDef {
  return {
    opType,
    infer(ctx): OpResult {
      const x = input(ctx, 0)
      const r = x.dims.length
      const given = axesArg(ctx, axesInputSince)
      const noop = ctx.opset >= axesInputSince && attrInt(ctx.node, 'noop_with_empty_axes', 0) !== 0
      if ((given === undefined || given.length === 0) && noop) {
        return { outputs: [info(x.dtype, x.dims, x.values)], aliasOf: 0 }
      }
      const axes = given === undefined || given.length === 0 ? x.dims.map((_, i) => i) : axesOf(ctx, given, r)
      const keep = attrInt(ctx.node, 'keepdims', 1) !== 0
      const flags = x.dims.map((_, i) => axes.includes(i))
      const dims = keep ? x.dims.map((d, i) => (flags[i] ? 1 : d)) : x.dims.filter((_, i) => !flags[i])
      const values = foldReduce(ctx, kind, flags, dims)
      if (values !== undefined) return { outputs: [info(x.dtype, dims, values)] }
      if (!reduceTypes.has(x.dtype)) throw unsupported(ctx, `dtype ${x.dtype}`)
      return {
        outputs: [info(x.dtype, dims)],
        kernel: () => ({ op: 'Reduce', inputs: [0], ints: [kind, ...flags.map((f) => (f ? 1 : 0))], floats: [] }),
      }
    },
  }
}

function argDef(opType: string, isMin: number): OpDef {
  return {
    opType,
    infer(ctx): OpResult {
      const x = input(ctx, 0)
      const axis = axisOf(ctx, attrInt(ctx.node, 'axis', 0), x.dims.length)
      const keep = attrInt(ctx.node, 'keepdims', 1) !== 0
      const last = attrInt(ctx.node, 'select_last_index', 0) !== 0 ? 1 : 0
      const dims = keep ? x.dims.map((d, i) => (i === axis ? 1 : d)) : x.dims.filter((_, i) => i !== axis)
      const xd = numericDims(x)
      if (x.values !== undefined && xd !== undefined && x.values.every(isConcrete) && foldable('int64', dims)) {
        const vals = x.values as readonly number[]
        const keptDims = xd.map((d, k) => (k === axis ? 1 : d))
        const values = mapCoords(keptDims, (c) => {
          let best = 0
          for (let j = 1; j < xd[axis]!; j++) {
            const v = valueAt(vals, xd, c.map((u, k) => (k === axis ? j : u))) as number
            const b = valueAt(vals, xd, c.map((u, k) => (k === axis ? best : u))) as number
            if (isMin ? v < b || (last && v === b) : v > b || (last && v === b)) best = j
          }
          return best
        })
        return { outputs: [info('int64', dims, values)] }
      }
      if (!reduceTypes.has(x.dtype)) throw unsupported(ctx, `dtype ${x.dtype}`)
      return {
        outputs: [info('int64', dims)],
        kernel: () => ({ op: 'ArgReduce', inputs: [0], ints: [axis, isMin, last], floats: [] }),
      }
    },
  }
}

export const reduceOps: OpDef[] = [
  ...kinds.map(([t, k, since]) => reduceDef(t, k, since)),
  argDef('ArgMax', 0),
  argDef('ArgMin', 1),
]
