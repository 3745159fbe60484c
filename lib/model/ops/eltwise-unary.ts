// SPDX-License-Identifier: Apache-2.0
// One-input elementwise functions (Relu, Sigmoid, ..., Gelu, Shrink): all run as the native 'Unary'
// op with the function code in ints[0] and alpha/beta/gamma in floats.
import type { DType } from '../dtype.js'
import type { Dim, Node } from '../ir.js'
import { isConcrete } from '../dims.js'
import { attrFloat, attrString } from '../attrs.js'
import type { OpContext, OpDef } from './op-def.js'
import { info } from './op-def.js'
import { input, unsupported } from './op-util.js'
import { UnaryCode } from './eltwise-codes.js'
import { requireDtype } from './eltwise-check.js'
import { isFusedSwish } from '../fuse-swish.js'
import { FLOAT_DTYPES, NUMERIC_DTYPES, foldValues, normalize } from './eltwise-values.js'

type Fn = (x: number) => number

interface UnarySpec {
  readonly opType: string
  readonly code: number
  readonly dtypes: readonly DType[]
  /** floats [alpha, beta, gamma] from the attributes (defaults per the ONNX spec). */
  readonly params?: (node: Node) => number[]
  /** The function code when it depends on attributes (Gelu's approximate). */
  readonly codeOf?: (ctx: OpContext) => number
  /**
   * JS reference used to fold known contents; absent: never folded here (the engine folds constant
   * float subgraphs with the native kernel). Only functions whose double result rounds to exactly
   * what the float32 kernel computes are given one, so folding here or natively agrees bit for bit.
   */
  readonly js?: Fn
  /** The result for a symbolic dim (integer dtypes; dims are >= 0). */
  readonly sym?: (x: string) => Dim | undefined
}

function roundHalfEven(x: number): number {
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x)
}

const same = (x: string): Dim => x

const F = FLOAT_DTYPES
const N = NUMERIC_DTYPES

/** Functions with no attributes. */
const plain: ReadonlyArray<[string, number, readonly DType[], Fn | undefined]> = [
  ['Tanh', UnaryCode.tanh, F, undefined],
  ['Exp', UnaryCode.exp, F, undefined],
  ['Log', UnaryCode.log, F, undefined],
  ['Sqrt', UnaryCode.sqrt, F, Math.sqrt],
  ['Erf', UnaryCode.erf, F, undefined],
  ['Reciprocal', UnaryCode.reciprocal, F, (x) => 1 / x],
  ['Floor', UnaryCode.floor, F, Math.floor],
  ['Ceil', UnaryCode.ceil, F, Math.ceil],
  ['Round', UnaryCode.round, F, roundHalfEven],
  ['Sin', UnaryCode.sin, F, undefined],
  ['Cos', UnaryCode.cos, F, undefined],
  ['Tan', UnaryCode.tan, F, undefined],
  ['Asin', UnaryCode.asin, F, undefined],
  ['Acos', UnaryCode.acos, F, undefined],
  ['Atan', UnaryCode.atan, F, undefined],
  ['Sinh', UnaryCode.sinh, F, undefined],
  ['Cosh', UnaryCode.cosh, F, undefined],
  ['Asinh', UnaryCode.asinh, F, undefined],
  ['Acosh', UnaryCode.acosh, F, undefined],
  ['Atanh', UnaryCode.atanh, F, undefined],
  ['Softplus', UnaryCode.softplus, F, undefined],
  ['Softsign', UnaryCode.softsign, F, undefined],
  ['HardSwish', UnaryCode.hardSwish, F, undefined],
  ['Mish', UnaryCode.mish, F, undefined],
]

const specs: UnarySpec[] = [
  ...plain.map(([opType, code, dtypes, fn]): UnarySpec => ({
    opType,
    code,
    dtypes,
    ...(fn === undefined ? {} : { js: fn }),
  })),
  { opType: 'Relu', code: UnaryCode.relu, dtypes: N, js: (x) => (x < 0 ? 0 : x), sym: same },
  { opType: 'Abs', code: UnaryCode.abs, dtypes: N, js: Math.abs, sym: same },
  { opType: 'Neg', code: UnaryCode.neg, dtypes: N, js: (x) => -x },
  { opType: 'Sign', code: UnaryCode.sign, dtypes: N, js: (x) => (x > 0 ? 1 : x < 0 ? -1 : x) },
  {
    opType: 'LeakyRelu',
    code: UnaryCode.leakyRelu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 0.01)],
  },
  {
    opType: 'Elu',
    code: UnaryCode.elu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
  },
  {
    opType: 'Selu',
    code: UnaryCode.selu,
    dtypes: F,
    params: (n) => [
      attrFloat(n, 'alpha', 1.67326319217681884765625),
      0,
      attrFloat(n, 'gamma', 1.05070102214813232421875),
    ],
  },
  {
    opType: 'Celu',
    code: UnaryCode.celu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
  },
  {
    opType: 'ThresholdedRelu',
    code: UnaryCode.thresholdedRelu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
  },
  {
    opType: 'HardSigmoid',
    code: UnaryCode.hardSigmoid,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 0.2), attrFloat(n, 'beta', 0.5)],
  },
  {
    opType: 'Shrink',
    code: UnaryCode.shrink,
    dtypes: F,
    params: (n) => [attrFloat(n, 'lambd', 0.5), attrFloat(n, 'bias', 0)],
  },
  { opType: 'Gelu', code: UnaryCode.gelu, dtypes: F, codeOf: geluCode },
  // x * sigmoid(x) when fuse-swish.ts absorbed the Mul after it
  { opType: 'Sigmoid', code: UnaryCode.sigmoid, dtypes: F, codeOf: (ctx) => (isFusedSwish(ctx.node) ? UnaryCode.swish : UnaryCode.sigmoid) },
]

function geluCode(ctx: OpContext): number {
  const approximate = attrString(ctx.node, 'approximate', 'none')
  if (approximate === 'none') return UnaryCode.gelu
  if (approximate === 'tanh') return UnaryCode.geluTanh
  throw unsupported(ctx, `approximate='${approximate}' (expected 'none' or 'tanh')`)
}

function unaryDef(spec: UnarySpec): OpDef {
  return {
    opType: spec.opType,
    infer(ctx) {
      const x = input(ctx, 0)
      requireDtype(ctx, x.dtype, spec.dtypes, 'input')
      const floats = spec.params?.(ctx.node) ?? []
      const code = spec.codeOf?.(ctx) ?? spec.code
      const fn = spec.js
      const values =
        fn === undefined
          ? undefined
          : foldValues([x], x.dims, ([v]) => {
              if (v === undefined) return undefined
              return normalize(x.dtype, isConcrete(v) ? fn(v) : spec.sym?.(v))
            })
      return {
        outputs: [info(x.dtype, x.dims, values)],
        kernel: () => ({ op: 'Unary', inputs: [0], ints: [code], floats }),
      }
    },
  }
}

export const unaryOps: OpDef[] = specs.map(unaryDef)
