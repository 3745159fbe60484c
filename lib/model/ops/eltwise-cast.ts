// SPDX-License-Identifier: Apache-2.0
// Cast and CastLike (native 'Cast'); casts of known contents fold here, symbolic dims included when
// the target is an integer dtype.
import type { DType } from '../dtype.js'
import { dtypeCode, dtypeFromCode, isFloat } from '../dtype.js'
import type { Dim, ValueInfo } from '../ir.js'
import { isConcrete } from '../dims.js'
import { attrInt } from '../attrs.js'
import type { OpContext, OpDef, OpResult } from './op-def.js'
import { info } from './op-def.js'
import { input, unsupported } from './op-util.js'
import { requireDtype } from './eltwise-check.js'
import { ALL_DTYPES, normalize } from './eltwise-values.js'

const intRange: Partial<Record<DType, [number, number]>> = {
  int8: [-128, 127],
  uint8: [0, 255],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  int64: [-9223372036854775808, 9223372036854775807],
  uint64: [0, 18446744073709551615],
}

/** A value cast to dtype `to`; out-of-range floats are left to the (saturating) native kernel. */
function castValue(from: DType, to: DType, v: Dim): Dim | undefined {
  const range = intRange[to]
  if (range !== undefined && isFloat(from) && isConcrete(v) && !(v >= range[0] && v <= range[1])) return undefined
  return normalize(to, v)
}

function castResult(ctx: OpContext, x: ValueInfo, to: DType): OpResult {
  requireDtype(ctx, x.dtype, ALL_DTYPES, 'input')
  let values = x.values?.map((v) => castValue(x.dtype, to, v))
  if (values !== undefined && values.some((v) => v === undefined)) values = undefined
  const out = info(to, x.dims, values as ValueInfo['values'])
  if (to === x.dtype) return { outputs: [out], aliasOf: 0 }
  return {
    outputs: [out],
    kernel: () => ({ op: 'Cast', inputs: [0], ints: [dtypeCode(to)], floats: [] }),
  }
}

const castDef: OpDef = {
  opType: 'Cast',
  sinceOpset: 6,
  infer(ctx) {
    const x = input(ctx, 0)
    if (typeof ctx.node.attrs.get('to') === 'string') throw unsupported(ctx, "a string 'to' (opset < 6)")
    const code = attrInt(ctx.node, 'to', -1)
    const to = dtypeFromCode(code)
    if (to === undefined) throw unsupported(ctx, `cast to ONNX dtype ${code}`)
    return castResult(ctx, x, to)
  },
}

const castLikeDef: OpDef = {
  opType: 'CastLike',
  sinceOpset: 15,
  infer(ctx) {
    return castResult(ctx, input(ctx, 0), input(ctx, 1).dtype)
  },
}

export const castOps: OpDef[] = [castDef, castLikeDef]
