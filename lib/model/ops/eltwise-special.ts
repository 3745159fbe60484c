// SPDX-License-Identifier: Apache-2.0
// One-input elementwise ops with their own native call or bool results: Not, IsNaN, IsInf, Clip,
// Dropout (inference).
import { ModelFormatError } from '../../errors.js'
import type { Dim, ValueInfo } from '../ir.js'
import { isConcrete } from '../dims.js'
import { attrFloat, attrInt } from '../attrs.js'
import type { KernelCall, OpContext, OpDef } from './op-def.js'
import { info } from './op-def.js'
import { input, knownNumbers, shapeError, unsupported } from './op-util.js'
import { UnaryCode } from './eltwise-codes.js'
import { hasOutput, requireDtype } from './eltwise-check.js'
import { FLOAT_DTYPES, NUMERIC_DTYPES, foldValues, isInt, normalize, numeric } from './eltwise-values.js'

const notDef: OpDef = {
  opType: 'Not',
  infer(ctx) {
    const x = input(ctx, 0)
    requireDtype(ctx, x.dtype, ['bool'], 'input')
    const not = numeric((v) => (v === 0 ? 1 : 0))
    const values = foldValues([x], x.dims, ([v]) => (v === undefined ? undefined : not(v)))
    return {
      outputs: [info('bool', x.dims, values)],
      kernel: () => ({ op: 'Unary', inputs: [0], ints: [UnaryCode.logicalNot], floats: [] }),
    }
  },
}

function classifyDef(opType: 'IsNaN' | 'IsInf'): OpDef {
  return {
    opType,
    infer(ctx) {
      const x = input(ctx, 0)
      requireDtype(ctx, x.dtype, FLOAT_DTYPES, 'input')
      const neg = attrInt(ctx.node, 'detect_negative', 1) !== 0
      const pos = attrInt(ctx.node, 'detect_positive', 1) !== 0
      const test =
        opType === 'IsNaN'
          ? (v: number): boolean => Number.isNaN(v)
          : (v: number): boolean => (v === Infinity && pos) || (v === -Infinity && neg)
      const values = foldValues([x], x.dims, ([v]) => (v !== undefined && isConcrete(v) ? +test(v) : undefined))
      const ints = opType === 'IsNaN' ? [] : [+neg, +pos]
      return {
        outputs: [info('bool', x.dims, values)],
        kernel: () => ({ op: opType, inputs: [0], ints, floats: [] }),
      }
    },
  }
}

/** A Clip bound: absent, known at plan time, or a tensor read at run time. */
type Bound = { kind: 'none' } | { kind: 'value'; v: number } | { kind: 'tensor' }

function clipBound(ctx: OpContext, x: ValueInfo, i: number): Bound {
  const name = i === 1 ? 'min' : 'max'
  if (ctx.opset < 11) {
    const v = ctx.node.attrs.get(name)
    return v === undefined ? { kind: 'none' } : { kind: 'value', v: attrFloat(ctx.node, name, 0) }
  }
  const b = ctx.inputs[i]
  if (b === undefined) return { kind: 'none' }
  if (b.dtype !== x.dtype) {
    throw new ModelFormatError(`node '${ctx.node.name}' (Clip): ${name} is ${b.dtype}, input is ${x.dtype}`)
  }
  const known = knownNumbers(ctx, i)
  if (known === undefined) return { kind: 'tensor' }
  if (known.length !== 1) throw shapeError(ctx, `${name} must have one element (got ${known.length})`)
  const v = known[0] as number
  // int attributes travel as exact doubles (|v| <= 2^53); larger int64 bounds are read from the tensor
  if (isInt(x.dtype) && !Number.isSafeInteger(v)) return { kind: 'tensor' }
  return { kind: 'value', v }
}

function clipKernel(x: ValueInfo, lo: Bound, hi: Bound): KernelCall {
  const integer = isInt(x.dtype)
  const has = (b: Bound): number => +(b.kind === 'value')
  const num = (b: Bound): number => (b.kind === 'value' ? b.v : 0)
  return {
    op: 'Clip',
    inputs: [0, lo.kind === 'tensor' ? 1 : -1, hi.kind === 'tensor' ? 2 : -1],
    ints: [has(lo), has(hi), integer ? num(lo) : 0, integer ? num(hi) : 0],
    floats: [num(lo), num(hi)],
  }
}

const clipDef: OpDef = {
  opType: 'Clip',
  infer(ctx) {
    const x = input(ctx, 0)
    requireDtype(ctx, x.dtype, ctx.opset < 12 ? FLOAT_DTYPES : NUMERIC_DTYPES, 'input')
    const lo = clipBound(ctx, x, 1)
    const hi = clipBound(ctx, x, 2)
    let values: Dim[] | undefined
    if (lo.kind !== 'tensor' && hi.kind !== 'tensor') {
      const l = lo.kind === 'value' ? lo.v : -Infinity
      const h = hi.kind === 'value' ? hi.v : Infinity
      const clip = numeric((v) => Math.min(Math.max(v, l), h))
      values = foldValues([x], x.dims, ([v]) => (v === undefined ? undefined : normalize(x.dtype, clip(v))))
    }
    return { outputs: [info(x.dtype, x.dims, values)], kernel: () => clipKernel(x, lo, hi) }
  },
}

/** Known scalar of optional input i: undefined when absent, 'runtime' when only known at run time. */
function knownScalar(ctx: OpContext, i: number): number | 'runtime' | undefined {
  if (ctx.inputs[i] === undefined) return undefined
  const v = knownNumbers(ctx, i)
  return v === undefined ? 'runtime' : (v[0] ?? 0)
}

const dropoutDef: OpDef = {
  opType: 'Dropout',
  infer(ctx) {
    const x = input(ctx, 0)
    requireDtype(ctx, x.dtype, FLOAT_DTYPES, 'input')
    const modern = ctx.opset >= 12
    const ratio = (modern ? knownScalar(ctx, 1) : undefined) ?? attrFloat(ctx.node, 'ratio', 0.5)
    const training = modern ? knownScalar(ctx, 2) : undefined
    if (training !== undefined && training !== 'runtime' && training !== 0 && ratio !== 0 && ratio !== 'runtime') {
      throw unsupported(ctx, 'training_mode=true (flexpipe runs inference only)')
    }
    const mask = hasOutput(ctx, 1)
    const maskDtype = ctx.opset < 10 ? x.dtype : 'bool'
    const outputs = [info(x.dtype, x.dims, x.values)]
    if (mask) {
      const ones = x.values === undefined ? undefined : x.values.map(() => normalize(maskDtype, 1) ?? 1)
      outputs.push(info(maskDtype, x.dims, ones))
    }
    const checkTraining = training !== undefined && training !== 0
    if (!mask && !checkTraining) return { outputs, aliasOf: 0 }
    return {
      outputs,
      kernel: () => ({
        op: 'Dropout',
        inputs: [0, checkTraining && ratio === 'runtime' ? 1 : -1, checkTraining ? 2 : -1],
        ints: [],
        floats: [ratio === 'runtime' ? 0.5 : ratio],
        outputs: mask ? 2 : 1,
      }),
    }
  },
}

export const specialOps: OpDef[] = [notDef, classifyDef('IsNaN'), classifyDef('IsInf'), clipDef, dropoutDef]
