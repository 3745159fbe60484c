// SPDX-License-Identifier: Apache-2.0
// DepthToSpace and SpaceToDepth (any dtype, NCHW): block permutations between channels and space.
import { attrInt, attrString } from '../attrs.js'
import { dimDiv, dimMul, isConcrete } from '../dims.js'
import type { Dim } from '../ir.js'
import { info, type OpDef } from './op-def.js'
import { input, shapeError, unsupported } from './op-util.js'

const depthToSpace: OpDef = {
  opType: 'DepthToSpace',
  infer(ctx) {
    const x = input(ctx, 0)
    if (x.dims.length !== 4) throw shapeError(ctx, `input must be 4-D (got rank ${x.dims.length})`)
    const b = attrInt(ctx.node, 'blocksize', 0)
    if (!Number.isInteger(b) || b < 1) throw shapeError(ctx, `blocksize ${b} is invalid`)
    const mode = attrString(ctx.node, 'mode', 'DCR')
    if (mode !== 'DCR' && mode !== 'CRD') throw unsupported(ctx, `mode = ${mode}`)
    const [n, c, h, w] = x.dims as [Dim, Dim, Dim, Dim]
    if (isConcrete(c) && c % (b * b) !== 0) {
      throw shapeError(ctx, `${c} channels do not divide by blocksize^2 = ${b * b}`)
    }
    const out: Dim[] = [n, dimDiv(c, b * b), dimMul(h, b), dimMul(w, b)]
    return {
      outputs: [info(x.dtype, out)],
      kernel: () => ({ op: 'DepthToSpace', inputs: [0], ints: [b, mode === 'CRD' ? 1 : 0], floats: [] }),
    }
  },
}

const spaceToDepth: OpDef = {
  opType: 'SpaceToDepth',
  infer(ctx) {
    const x = input(ctx, 0)
    if (x.dims.length !== 4) throw shapeError(ctx, `input must be 4-D (got rank ${x.dims.length})`)
    const b = attrInt(ctx.node, 'blocksize', 0)
    if (!Number.isInteger(b) || b < 1) throw shapeError(ctx, `blocksize ${b} is invalid`)
    const [n, c, h, w] = x.dims as [Dim, Dim, Dim, Dim]
    for (const d of [h, w]) {
      if (isConcrete(d) && d % b !== 0) throw shapeError(ctx, `spatial dim ${d} does not divide by blocksize ${b}`)
    }
    const out: Dim[] = [n, dimMul(c, b * b), dimDiv(h, b), dimDiv(w, b)]
    return {
      outputs: [info(x.dtype, out)],
      kernel: () => ({ op: 'SpaceToDepth', inputs: [0], ints: [b], floats: [] }),
    }
  },
}

export const spaceOps: OpDef[] = [depthToSpace, spaceToDepth]
