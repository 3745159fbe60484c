// SPDX-License-Identifier: Apache-2.0
// Operators whose output size may depend on the values of their inputs (native/kernels/select/):
// NonZero (how many elements are not zero) and TopK (when the model computes k). Such a size is a
// data-dependent dim (OpContext.dataDim): planned at its upper bound, the op writes its output packed
// at the actual size and that size as its last output, an int64 scalar the engine reads before the ops
// after it run (lib/runtime/data-dims.ts).
import { attrInt } from '../attrs.js'
import { dimMul, isConcrete } from '../dims.js'
import type { Dim, TensorData } from '../ir.js'
import { constantInfo, hostTensor } from '../values.js'
import { info, type OpDef } from './op-def.js'
import { dataDim, input, knownDims, shapeError, unsupported } from './op-util.js'
import { axisOf } from './tensor-util.js'

const topKTypes = new Set(['float32', 'float64', 'int32', 'int64'])

/** The coordinates of the nonzero elements of a host tensor, as NonZero's output. */
function nonzeroOf(t: TensorData): TensorData {
  const dims = t.dims as number[]
  const data = t.data as ArrayLike<number | bigint>
  const hits: number[] = []
  for (let i = 0; i < data.length; i++) if (data[i] !== 0 && data[i] !== 0n) hits.push(i)
  const out = new BigInt64Array(dims.length * hits.length)
  hits.forEach((flat, j) => {
    for (let r = dims.length - 1; r >= 0; r--) {
      out[r * hits.length + j] = BigInt(flat % dims[r]!)
      flat = Math.floor(flat / dims[r]!)
    }
  })
  return { dtype: 'int64', dims: [dims.length, hits.length], data: out }
}

const nonZero: OpDef = {
  opType: 'NonZero',
  sinceOpset: 9,
  infer(ctx) {
    const x = input(ctx, 0)
    if (x.dims.length === 0) throw unsupported(ctx, 'a scalar input (reshape it to [1])')
    const host = x.dtype === 'float16' ? undefined : hostTensor(x)
    if (host !== undefined) {
      const t = nonzeroOf(host)
      return { outputs: [constantInfo(t)] }
    }
    const n = dataDim(ctx, x.dims.reduce<Dim>((p, d) => dimMul(p, d), 1), 'the number of nonzero elements').dim
    return {
      outputs: [info('int64', [x.dims.length, n]), info('int64', [])],
      kernel: () => ({ op: 'NonZero', inputs: [0], ints: [], floats: [] }),
    }
  },
}

const topK: OpDef = {
  opType: 'TopK',
  infer(ctx) {
    const x = input(ctx, 0)
    if (!topKTypes.has(x.dtype)) throw unsupported(ctx, `input dtype ${x.dtype} (float32, float64, int32 and int64 are supported)`)
    if (x.dims.length === 0) throw shapeError(ctx, 'the input must have rank >= 1')
    const axis = axisOf(ctx, attrInt(ctx.node, 'axis', -1), x.dims.length)
    const largest = ctx.opset >= 11 ? attrInt(ctx.node, 'largest', 1) : 1
    const sorted = ctx.opset >= 11 ? attrInt(ctx.node, 'sorted', 1) : 1
    const n = x.dims[axis]!
    let k: Dim
    let fromData = false
    if (ctx.opset < 10) {
      k = attrInt(ctx.node, 'k', -1)
      if (k < 0) throw shapeError(ctx, 'attribute k is required')
    } else {
      const known = knownDims(ctx, 1)
      if (known !== undefined && known.length !== 1) throw shapeError(ctx, `k must hold one value (got ${known.length})`)
      // k from a shape function (min(count, 5)) is known in a concrete pass, not always in a symbolic one
      const r = dataDim(ctx, n, 'k, computed by the model,', known?.[0])
      k = r.dim
      fromData = r.fromData
    }
    if (isConcrete(k) && (k < 0 || (isConcrete(n) && k > n))) throw shapeError(ctx, `k = ${k} is outside 0..${n} (the dim of axis ${axis})`)
    const dims = x.dims.map((d, i) => (i === axis ? k : d))
    return {
      outputs: [info(x.dtype, dims), info('int64', dims), ...(fromData ? [info('int64', [])] : [])],
      // k from input 1 is read by the kernel (a constant, or a shape constant recomputed per shape), so
      // that the op's words are the same for every k
      kernel: () => ({
        op: 'TopK',
        inputs: [0, ctx.opset < 10 ? -1 : 1],
        ints: [axis, largest, sorted, ctx.opset < 10 ? (k as number) : -1, fromData ? 1 : 0],
        floats: [],
        workspace: 8 * Math.max(1, n as number), // present at every size: the programs of all sizes share their slots
      }),
    }
  },
}

export const selectOps: OpDef[] = [nonZero, topK]
