// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool (optional Indices), AveragePool, LpPool, GlobalAveragePool/MaxPool/LpPool.
import { attrFloat, attrInt } from '../attrs.js'
import { concrete } from '../dims.js'
import type { DType } from '../dtype.js'
import type { Dim, ValueInfo } from '../ir.js'
import { info, type KernelCall, type OpContext, type OpDef } from './op-def.js'
import { input, unsupported } from './op-util.js'
import { type Window, windowAttrs, windowInts, windowOutput, windowPads } from './nn-spatial.js'

/** X of rank 3..5 with one of the given dtypes; returns it and its spatial rank. */
function poolInput(ctx: OpContext, dtypes: readonly DType[]): { x: ValueInfo; nsp: number } {
  const x = input(ctx, 0)
  if (!dtypes.includes(x.dtype)) throw unsupported(ctx, `dtype ${x.dtype} (supported: ${dtypes.join(', ')})`)
  const nsp = x.dims.length - 2
  if (nsp < 1 || nsp > 3) throw unsupported(ctx, `rank ${x.dims.length} input (1 to 3 spatial dims supported)`)
  return { x, nsp }
}

/** Native call of a windowed pool: the spatial block plus `extra` ints. */
function poolCall(ctx: OpContext, op: string, win: Window, x: ValueInfo, extra: number[], floats: number[] = [],
  outputs?: number): KernelCall {
  const { begin, end } = windowPads(win, concrete(x.dims.slice(2), `node '${ctx.node.name}'`))
  const call: KernelCall = { op, inputs: [0], ints: [...windowInts(win, begin, end), ...extra], floats }
  return outputs === undefined ? call : { ...call, outputs }
}

function outDims(ctx: OpContext, x: ValueInfo, win: Window): Dim[] {
  return [x.dims[0]!, x.dims[1]!, ...windowOutput(ctx, win, x.dims.slice(2))]
}

const maxPool: OpDef = {
  opType: 'MaxPool',
  infer(ctx) {
    const { x, nsp } = poolInput(ctx, ['float32', 'float64', 'uint8', 'int8'])
    const win = windowAttrs(ctx, nsp)
    const storageOrder = attrInt(ctx.node, 'storage_order', 0)
    const dims = outDims(ctx, x, win)
    const wantIndices = (ctx.node.outputs[1] ?? '') !== ''
    const outputs = [info(x.dtype, dims)]
    if (ctx.node.outputs.length > 1) outputs.push(info('int64', dims))
    return {
      outputs,
      kernel: () => poolCall(ctx, 'MaxPool', win, x, [storageOrder !== 0 ? 1 : 0], [], wantIndices ? 2 : 1),
    }
  },
}

const averagePool: OpDef = {
  opType: 'AveragePool',
  infer(ctx) {
    const { x, nsp } = poolInput(ctx, ['float32'])
    const win = windowAttrs(ctx, nsp)
    const includePad = attrInt(ctx.node, 'count_include_pad', 0) !== 0 ? 1 : 0
    return {
      outputs: [info(x.dtype, outDims(ctx, x, win))],
      kernel: () => poolCall(ctx, 'AveragePool', win, x, [includePad]),
    }
  },
}

const lpPool: OpDef = {
  opType: 'LpPool',
  infer(ctx) {
    const { x, nsp } = poolInput(ctx, ['float32'])
    const win = windowAttrs(ctx, nsp)
    const p = attrFloat(ctx.node, 'p', 2)
    if (!(p > 0)) throw unsupported(ctx, `p = ${p}`)
    return {
      outputs: [info(x.dtype, outDims(ctx, x, win))],
      kernel: () => poolCall(ctx, 'LpPool', win, x, [], [p]),
    }
  },
}

function globalPool(opType: string, withP: boolean): OpDef {
  return {
    opType,
    infer(ctx) {
      const x = input(ctx, 0)
      if (x.dtype !== 'float32') throw unsupported(ctx, `dtype ${x.dtype} (only float32)`)
      if (x.dims.length < 2) throw unsupported(ctx, `rank ${x.dims.length} input (expected [N, C, ...])`)
      const p = withP ? attrFloat(ctx.node, 'p', 2) : 0
      const dims: Dim[] = [x.dims[0]!, x.dims[1]!, ...x.dims.slice(2).map(() => 1)]
      return {
        outputs: [info(x.dtype, dims)],
        kernel: () => ({ op: opType, inputs: [0], ints: [], floats: withP ? [p] : [] }),
      }
    },
  }
}

export const poolOps: OpDef[] = [
  maxPool,
  averagePool,
  lpPool,
  globalPool('GlobalAveragePool', false),
  globalPool('GlobalMaxPool', false),
  globalPool('GlobalLpPool', true),
]
