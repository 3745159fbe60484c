// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul (float32): output dims with numpy matmul rules and bias broadcasting.
import { attrFloat, attrInt } from '../attrs.js'
import { broadcastDims, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import { info, type OpDef } from './op-def.js'
import { input, optionalInput, shapeError, unsupported } from './op-util.js'

function sameDim(a: Dim, b: Dim): boolean {
  return a === b || !isConcrete(a) || !isConcrete(b)
}

const gemm: OpDef = {
  opType: 'Gemm',
  infer(ctx) {
    const a = input(ctx, 0)
    const b = input(ctx, 1)
    const c = optionalInput(ctx, 2)
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || (c !== undefined && c.dtype !== 'float32')) {
      throw unsupported(ctx, `dtype ${a.dtype} (only float32)`)
    }
    if (a.dims.length !== 2 || b.dims.length !== 2) {
      throw shapeError(ctx, `A and B must be 2-D (got ranks ${a.dims.length} and ${b.dims.length})`)
    }
    const transA = attrInt(ctx.node, 'transA', 0) !== 0
    const transB = attrInt(ctx.node, 'transB', 0) !== 0
    const m = a.dims[transA ? 1 : 0]!
    const k = a.dims[transA ? 0 : 1]!
    const kb = b.dims[transB ? 1 : 0]!
    const n = b.dims[transB ? 0 : 1]!
    if (!sameDim(k, kb)) throw shapeError(ctx, `inner dims differ (${k} vs ${kb})`)
    const out: Dim[] = [m, n]
    if (c !== undefined) {
      if (c.dims.length > 2) throw shapeError(ctx, `C has rank ${c.dims.length} (at most 2)`)
      const bc = broadcastDims(out, c.dims, `node '${ctx.node.name}' (Gemm)`)
      if (!bc.every((d, i) => sameDim(d, out[i]!))) {
        throw shapeError(ctx, `C [${c.dims}] does not broadcast to [${out}]`)
      }
    }
    const alpha = attrFloat(ctx.node, 'alpha', 1)
    const beta = attrFloat(ctx.node, 'beta', 1)
    return {
      outputs: [info('float32', out)],
      kernel: () => ({
        op: 'Gemm',
        inputs: [0, 1, c === undefined ? -1 : 2],
        ints: [transA ? 1 : 0, transB ? 1 : 0],
        floats: [alpha, beta],
      }),
    }
  },
}

const matMul: OpDef = {
  opType: 'MatMul',
  infer(ctx) {
    const a = input(ctx, 0)
    const b = input(ctx, 1)
    if (a.dtype !== 'float32' || b.dtype !== 'float32') throw unsupported(ctx, `dtype ${a.dtype} (only float32)`)
    if (a.dims.length < 1 || b.dims.length < 1) throw shapeError(ctx, 'MatMul operands must have rank >= 1')
    const ad = a.dims.length === 1 ? [1, a.dims[0]!] : a.dims
    const bd = b.dims.length === 1 ? [b.dims[0]!, 1] : b.dims
    const k = ad[ad.length - 1]!
    const kb = bd[bd.length - 2]!
    if (!sameDim(k, kb)) throw shapeError(ctx, `inner dims differ (${k} vs ${kb})`)
    const batch = broadcastDims(ad.slice(0, -2), bd.slice(0, -2), `node '${ctx.node.name}' (MatMul)`)
    const out: Dim[] = [...batch]
    if (a.dims.length > 1) out.push(ad[ad.length - 2]!)
    if (b.dims.length > 1) out.push(bd[bd.length - 1]!)
    return {
      outputs: [info('float32', out)],
      kernel: () => ({ op: 'MatMul', inputs: [0, 1], ints: [], floats: [] }),
    }
  },
}

export const matmulOps: OpDef[] = [gemm, matMul]
