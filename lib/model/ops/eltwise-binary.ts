// SPDX-License-Identifier: Apache-2.0
// Two-input broadcasting ops: arithmetic (native 'Binary'), comparisons (native 'Compare') and logic
// (And/Or/Xor as bitwise 'Binary' on bool). Known contents fold here, with symbolic dims where the
// result is still a dim expression (Add/Sub/Mul/Div of shapes).
import type { DType } from '../dtype.js'
import { isFloat } from '../dtype.js'
import type { Dim } from '../ir.js'
import { broadcastDims, dimAdd, dimDiv, dimMul, dimSub, isConcrete } from '../dims.js'
import { attrInt, attrString } from '../attrs.js'
import type { OpContext, OpDef } from './op-def.js'
import { info } from './op-def.js'
import { input, unsupported } from './op-util.js'
import { BinaryCode, CompareCode } from './eltwise-codes.js'
import { requireDtype, requireSameDtype } from './eltwise-check.js'
import { ALL_DTYPES, INT_DTYPES, NUMERIC_DTYPES, foldValues, normalize } from './eltwise-values.js'

export type Fold2 = (a: Dim, b: Dim) => Dim | undefined

const both =
  (f: (a: number, b: number) => number): Fold2 =>
  (a, b) =>
    isConcrete(a) && isConcrete(b) ? f(a, b) : undefined

/** Integer-or-float arithmetic on possibly symbolic dims. */
function intDiv(a: Dim, b: Dim): Dim | undefined {
  if (isConcrete(a) && isConcrete(b)) return b === 0 ? undefined : Math.trunc(a / b)
  // a symbolic dim is >= 0, so floor division by a positive number equals C's truncation
  if (isConcrete(b) && b > 0) return dimDiv(a, b)
  return undefined
}

function pyMod(a: number, b: number): number {
  const r = a % b
  return r !== 0 && r < 0 !== b < 0 ? r + b : r
}

/** Sign of a - b where it is known; symbolic dims are >= 0. */
export function order(a: Dim, b: Dim): number | undefined {
  if (isConcrete(a) && isConcrete(b)) return a < b ? -1 : a > b ? 1 : a === b ? 0 : undefined
  if (a === b) return 0
  if (isConcrete(b) && b < 0) return 1
  if (isConcrete(a) && a < 0) return -1
  return undefined
}

export function maxDim(a: Dim, b: Dim): Dim | undefined {
  if (isConcrete(a) && isConcrete(b)) return Number.isNaN(a) || a > b ? a : b
  const o = order(a, b)
  if (o !== undefined) return o >= 0 ? a : b
  if (isConcrete(b) && b <= 0) return a
  if (isConcrete(a) && a <= 0) return b
  return undefined
}

export function minDim(a: Dim, b: Dim): Dim | undefined {
  if (isConcrete(a) && isConcrete(b)) return Number.isNaN(a) || a < b ? a : b
  const o = order(a, b)
  if (o !== undefined) return o <= 0 ? a : b
  if (isConcrete(b) && b <= 0) return b
  if (isConcrete(a) && a <= 0) return a
  return undefined
}

/** Bitwise ops on integers (and 0/1 bools) beyond 32 bits. */
const bitwise = (f: (a: bigint, b: bigint) => bigint): Fold2 =>
  both((a, b) => (Number.isInteger(a) && Number.isInteger(b) ? Number(f(BigInt(a), BigInt(b))) : NaN))

const intOnly =
  (f: (a: number, b: number) => number) =>
  (float: boolean): Fold2 =>
    both((a, b) => (b === 0 && !float ? NaN : f(a, b)))

const folds: Readonly<Record<number, (float: boolean) => Fold2>> = {
  [BinaryCode.add]: (float) => (float ? both((a, b) => a + b) : dimAdd),
  [BinaryCode.sub]: (float) => (float ? both((a, b) => a - b) : dimSub),
  [BinaryCode.mul]: (float) => (float ? both((a, b) => a * b) : dimMul),
  [BinaryCode.div]: (float) => (float ? both((a, b) => a / b) : intDiv),
  // float pow differs from powf in the last bit: left to the native fold
  [BinaryCode.pow]: (float) => (float ? () => undefined : both((a, b) => a ** b)),
  // integer modulo by zero is undefined: NaN makes normalize() give up folding
  [BinaryCode.mod]: intOnly(pyMod),
  [BinaryCode.fmod]: intOnly((a, b) => a % b),
  [BinaryCode.max]: () => maxDim,
  [BinaryCode.min]: () => minDim,
  [BinaryCode.prelu]: () => both((a, b) => (a < 0 ? a * b : a)),
  [BinaryCode.shl]: () => both((a, b) => (b >= 0 && b < 53 ? a * 2 ** b : NaN)),
  [BinaryCode.shr]: () => both((a, b) => (b >= 0 && b < 64 ? Math.floor(a / 2 ** b) : 0)),
  [BinaryCode.bitAnd]: () => bitwise((a, b) => a & b),
  [BinaryCode.bitOr]: () => bitwise((a, b) => a | b),
  [BinaryCode.bitXor]: () => bitwise((a, b) => a ^ b),
}

/** The folding function of a Binary code for dtype (undefined: never folded). */
export function binaryFold(code: number, dtype: DType): Fold2 | undefined {
  return folds[code]?.(isFloat(dtype))
}

/** Broadcast dims of all inputs, naming the node on failure. */
export function broadcastAll(ctx: OpContext, dims: ReadonlyArray<readonly Dim[]>): Dim[] {
  const what = `node '${ctx.node.name}' (${ctx.node.opType})`
  return dims.reduce<Dim[]>((acc, d) => broadcastDims(acc, d, what), [])
}

/** Opset < 7 Add/Sub/Mul/Div broadcast B from `axis`; only numpy-compatible placements are supported. */
function checkLegacyBroadcast(ctx: OpContext, rankA: number, rankB: number): void {
  if (ctx.opset >= 7 || attrInt(ctx.node, 'broadcast', 0) === 0) return
  const axis = ctx.node.attrs.get('axis')
  if (axis !== undefined && attrInt(ctx.node, 'axis', 0) !== rankA - rankB) {
    throw unsupported(ctx, 'legacy broadcast with an explicit axis')
  }
}

interface BinarySpec {
  readonly opType: string
  readonly dtypes: readonly DType[]
  readonly code: (ctx: OpContext, dtype: DType) => number
}

function binaryDef(spec: BinarySpec): OpDef {
  return {
    opType: spec.opType,
    infer(ctx) {
      const a = input(ctx, 0)
      const b = input(ctx, 1)
      const dtype = requireSameDtype(ctx, [a, b], 'inputs')
      requireDtype(ctx, dtype, spec.dtypes, 'input')
      checkLegacyBroadcast(ctx, a.dims.length, b.dims.length)
      const code = spec.code(ctx, dtype)
      const dims = broadcastAll(ctx, [a.dims, b.dims])
      const fold = binaryFold(code, dtype)
      const values =
        fold === undefined
          ? undefined
          : foldValues([a, b], dims, ([x, y]) =>
              x === undefined || y === undefined ? undefined : normalize(dtype, fold(x, y)),
            )
      return {
        outputs: [info(dtype, dims, values)],
        kernel: () => ({ op: 'Binary', inputs: [0, 1], ints: [code, 0], floats: [] }),
      }
    },
  }
}

const fixed = (code: number) => (): number => code

function modCode(ctx: OpContext): number {
  const fmod = attrInt(ctx.node, 'fmod', 0) !== 0
  // ONNX requires fmod=1 for floats; fmod=0 on floats still gets Python's sign-of-divisor rule
  return fmod ? BinaryCode.fmod : BinaryCode.mod
}

function shiftCode(ctx: OpContext): number {
  const direction = attrString(ctx.node, 'direction', '')
  if (direction === 'LEFT') return BinaryCode.shl
  if (direction === 'RIGHT') return BinaryCode.shr
  throw unsupported(ctx, `direction='${direction}' (expected 'LEFT' or 'RIGHT')`)
}

const N = NUMERIC_DTYPES
const binarySpecs: BinarySpec[] = [
  { opType: 'Add', dtypes: N, code: fixed(BinaryCode.add) },
  { opType: 'Sub', dtypes: N, code: fixed(BinaryCode.sub) },
  { opType: 'Mul', dtypes: N, code: fixed(BinaryCode.mul) },
  { opType: 'Div', dtypes: N, code: fixed(BinaryCode.div) },
  { opType: 'Mod', dtypes: N, code: modCode },
  { opType: 'PRelu', dtypes: N, code: fixed(BinaryCode.prelu) },
  { opType: 'BitShift', dtypes: INT_DTYPES, code: shiftCode },
  { opType: 'And', dtypes: ['bool'], code: fixed(BinaryCode.bitAnd) },
  { opType: 'Or', dtypes: ['bool'], code: fixed(BinaryCode.bitOr) },
  { opType: 'Xor', dtypes: ['bool'], code: fixed(BinaryCode.bitXor) },
  { opType: 'BitwiseAnd', dtypes: INT_DTYPES, code: fixed(BinaryCode.bitAnd) },
  { opType: 'BitwiseOr', dtypes: INT_DTYPES, code: fixed(BinaryCode.bitOr) },
  { opType: 'BitwiseXor', dtypes: INT_DTYPES, code: fixed(BinaryCode.bitXor) },
]

const compareFolds: Readonly<Record<number, (o: number) => boolean>> = {
  [CompareCode.equal]: (o) => o === 0,
  [CompareCode.less]: (o) => o < 0,
  [CompareCode.greater]: (o) => o > 0,
  [CompareCode.lessEqual]: (o) => o <= 0,
  [CompareCode.greaterEqual]: (o) => o >= 0,
}

function compareDef(opType: string, code: number): OpDef {
  const test = compareFolds[code] as (o: number) => boolean
  return {
    opType,
    infer(ctx) {
      const a = input(ctx, 0)
      const b = input(ctx, 1)
      const dtype = requireSameDtype(ctx, [a, b], 'inputs')
      requireDtype(ctx, dtype, ALL_DTYPES, 'input')
      const dims = broadcastAll(ctx, [a.dims, b.dims])
      const values = foldValues([a, b], dims, ([x, y]) => {
        if (x === undefined || y === undefined) return undefined
        if (isConcrete(x) && isConcrete(y) && (Number.isNaN(x) || Number.isNaN(y))) return 0
        const o = order(x, y)
        return o === undefined ? undefined : +test(o)
      })
      return {
        outputs: [info('bool', dims, values)],
        kernel: () => ({ op: 'Compare', inputs: [0, 1], ints: [code], floats: [] }),
      }
    },
  }
}

export const binaryOps: OpDef[] = [
  ...binarySpecs.map(binaryDef),
  compareDef('Equal', CompareCode.equal),
  compareDef('Less', CompareCode.less),
  compareDef('Greater', CompareCode.greater),
  compareDef('LessOrEqual', CompareCode.lessEqual),
  compareDef('GreaterOrEqual', CompareCode.greaterEqual),
]
