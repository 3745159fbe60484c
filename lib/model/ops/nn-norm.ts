// SPDX-License-Identifier: Apache-2.0
// Normalizations and softmax-like ops (float32): BatchNormalization, InstanceNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization, Softmax, LogSoftmax, Hardmax.
import { attrFloat, attrInt, attrInts } from '../attrs.js'
import type { Dim, ValueInfo } from '../ir.js'
import { info, sameAs, type OpContext, type OpDef } from './op-def.js'
import { input, optionalInput, shapeError, unsupported } from './op-util.js'

function floatInput(ctx: OpContext, i: number): ValueInfo {
  const x = input(ctx, i)
  if (x.dtype !== 'float32') throw unsupported(ctx, `dtype ${x.dtype} (only float32)`)
  return x
}

function resolveAxis(ctx: OpContext, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis
  if (!Number.isInteger(a) || a < 0 || a >= rank) throw shapeError(ctx, `axis ${axis} is out of range for rank ${rank}`)
  return a
}

/** Whether node output i is requested (present and named). */
function wantsOutput(ctx: OpContext, i: number): boolean {
  return (ctx.node.outputs[i] ?? '') !== ''
}

const batchNorm: OpDef = {
  opType: 'BatchNormalization',
  infer(ctx) {
    const x = floatInput(ctx, 0)
    if (x.dims.length < 2) throw unsupported(ctx, `rank ${x.dims.length} input (expected [N, C, ...])`)
    for (let i = 1; i <= 4; i++) floatInput(ctx, i)
    if (ctx.opset < 9 && attrInt(ctx.node, 'spatial', 1) === 0) throw unsupported(ctx, 'spatial = 0')
    const training =
      ctx.opset >= 14 ? attrInt(ctx.node, 'training_mode', 0) !== 0 : wantsOutput(ctx, 1) || wantsOutput(ctx, 2)
    if (ctx.opset < 14 && (wantsOutput(ctx, 3) || wantsOutput(ctx, 4))) {
      throw unsupported(ctx, 'the saved_mean / saved_var training outputs')
    }
    const epsilon = attrFloat(ctx.node, 'epsilon', 1e-5)
    const momentum = attrFloat(ctx.node, 'momentum', 0.9)
    const channel: Dim[] = [x.dims[1]!]
    const outputs = ctx.node.outputs.map((_, i) => (i === 0 ? sameAs(x) : info('float32', channel)))
    return {
      outputs,
      kernel: () => ({
        op: 'BatchNormalization',
        inputs: [0, 1, 2, 3, 4],
        ints: [training ? 1 : 0],
        floats: [epsilon, momentum],
        outputs: training ? Math.min(3, ctx.node.outputs.length) : 1,
      }),
    }
  },
}

const instanceNorm: OpDef = {
  opType: 'InstanceNormalization',
  infer(ctx) {
    const x = floatInput(ctx, 0)
    if (x.dims.length < 2) throw unsupported(ctx, `rank ${x.dims.length} input (expected [N, C, ...])`)
    floatInput(ctx, 1)
    floatInput(ctx, 2)
    const epsilon = attrFloat(ctx.node, 'epsilon', 1e-5)
    return {
      outputs: [sameAs(x)],
      kernel: () => ({ op: 'InstanceNormalization', inputs: [0, 1, 2], ints: [], floats: [epsilon] }),
    }
  },
}

const layerNorm: OpDef = {
  opType: 'LayerNormalization',
  infer(ctx) {
    const x = floatInput(ctx, 0)
    floatInput(ctx, 1)
    const b = optionalInput(ctx, 2)
    if (b !== undefined && b.dtype !== 'float32') throw unsupported(ctx, `B dtype ${b.dtype} (only float32)`)
    const rank = x.dims.length
    const axis = resolveAxis(ctx, attrInt(ctx.node, 'axis', -1), rank)
    const epsilon = attrFloat(ctx.node, 'epsilon', 1e-5)
    const statDims: Dim[] = x.dims.map((d, i) => (i < axis ? d : 1))
    const outputs = ctx.node.outputs.map((_, i) => (i === 0 ? sameAs(x) : info('float32', statDims)))
    return {
      outputs,
      kernel: () => ({
        op: 'LayerNormalization',
        inputs: [0, 1, b === undefined ? -1 : 2],
        ints: [axis],
        floats: [epsilon],
      }),
    }
  },
}

const lrn: OpDef = {
  opType: 'LRN',
  infer(ctx) {
    const x = floatInput(ctx, 0)
    if (x.dims.length < 2) throw unsupported(ctx, `rank ${x.dims.length} input (expected [N, C, ...])`)
    const size = attrInt(ctx.node, 'size', 0)
    if (!Number.isInteger(size) || size < 1) throw shapeError(ctx, `size ${size} is invalid`)
    const floats = [
      attrFloat(ctx.node, 'alpha', 1e-4),
      attrFloat(ctx.node, 'beta', 0.75),
      attrFloat(ctx.node, 'bias', 1),
    ]
    return { outputs: [sameAs(x)], kernel: () => ({ op: 'LRN', inputs: [0], ints: [size], floats }) }
  },
}

const mvn: OpDef = {
  opType: 'MeanVarianceNormalization',
  infer(ctx) {
    const x = floatInput(ctx, 0)
    const rank = x.dims.length
    const axes = (attrInts(ctx.node, 'axes') ?? [0, 2, 3]).map((a) => resolveAxis(ctx, a, rank))
    if (new Set(axes).size !== axes.length) throw shapeError(ctx, `axes [${axes.join(', ')}] repeat an axis`)
    axes.sort((p, q) => p - q)
    return {
      outputs: [sameAs(x)],
      kernel: () => ({ op: 'MeanVarianceNormalization', inputs: [0], ints: axes, floats: [] }),
    }
  },
}

/** Softmax, LogSoftmax, Hardmax: opset < 13 flattens to 2-D at axis (default 1), later per axis (default -1). */
function softmaxLike(opType: string): OpDef {
  return {
    opType,
    infer(ctx) {
      const x = floatInput(ctx, 0)
      const rank = x.dims.length
      const coerce = ctx.opset < 13
      const axis = rank === 0 ? 0 : resolveAxis(ctx, attrInt(ctx.node, 'axis', coerce ? 1 : -1), rank)
      return {
        outputs: [sameAs(x)],
        kernel: () => ({ op: opType, inputs: [0], ints: [axis, coerce ? 1 : 0], floats: [] }),
      }
    },
  }
}

export const normOps: OpDef[] = [
  batchNorm,
  instanceNorm,
  layerNorm,
  lrn,
  mvn,
  softmaxLike('Softmax'),
  softmaxLike('LogSoftmax'),
  softmaxLike('Hardmax'),
]
