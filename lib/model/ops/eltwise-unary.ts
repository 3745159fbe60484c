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
  /** JS reference used to fold known contents; absent: never folded. */
  readonly js?: (p: readonly number[]) => Fn
  /** The result for a symbolic dim (integer dtypes; dims are >= 0). */
  readonly sym?: (x: string) => Dim | undefined
}

const p0 = (p: readonly number[]): number => p[0] ?? 0
const p1 = (p: readonly number[]): number => p[1] ?? 0
const p2 = (p: readonly number[]): number => p[2] ?? 0

function roundHalfEven(x: number): number {
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x)
}

function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x))
}

const clamp01 = (x: number): number => Math.max(0, Math.min(1, x))
const same = (x: string): Dim => x

const F = FLOAT_DTYPES
const N = NUMERIC_DTYPES

/** Functions with no attributes. */
const plain: ReadonlyArray<[string, number, readonly DType[], Fn | undefined]> = [
  ['Sigmoid', UnaryCode.sigmoid, F, (x) => 1 / (1 + Math.exp(-x))],
  ['Tanh', UnaryCode.tanh, F, Math.tanh],
  ['Exp', UnaryCode.exp, F, Math.exp],
  ['Log', UnaryCode.log, F, Math.log],
  ['Sqrt', UnaryCode.sqrt, F, Math.sqrt],
  ['Erf', UnaryCode.erf, F, undefined],
  ['Reciprocal', UnaryCode.reciprocal, F, (x) => 1 / x],
  ['Floor', UnaryCode.floor, F, Math.floor],
  ['Ceil', UnaryCode.ceil, F, Math.ceil],
  ['Round', UnaryCode.round, F, roundHalfEven],
  ['Sin', UnaryCode.sin, F, Math.sin],
  ['Cos', UnaryCode.cos, F, Math.cos],
  ['Tan', UnaryCode.tan, F, Math.tan],
  ['Asin', UnaryCode.asin, F, Math.asin],
  ['Acos', UnaryCode.acos, F, Math.acos],
  ['Atan', UnaryCode.atan, F, Math.atan],
  ['Sinh', UnaryCode.sinh, F, Math.sinh],
  ['Cosh', UnaryCode.cosh, F, Math.cosh],
  ['Asinh', UnaryCode.asinh, F, Math.asinh],
  ['Acosh', UnaryCode.acosh, F, Math.acosh],
  ['Atanh', UnaryCode.atanh, F, Math.atanh],
  ['Softplus', UnaryCode.softplus, F, softplus],
  ['Softsign', UnaryCode.softsign, F, (x) => x / (1 + Math.abs(x))],
  ['HardSwish', UnaryCode.hardSwish, F, (x) => x * clamp01(x / 6 + 0.5)],
  ['Mish', UnaryCode.mish, F, (x) => x * Math.tanh(softplus(x))],
]

const specs: UnarySpec[] = [
  ...plain.map(([opType, code, dtypes, fn]): UnarySpec => ({
    opType,
    code,
    dtypes,
    ...(fn === undefined ? {} : { js: () => fn }),
  })),
  { opType: 'Relu', code: UnaryCode.relu, dtypes: N, js: () => (x) => (x < 0 ? 0 : x), sym: same },
  { opType: 'Abs', code: UnaryCode.abs, dtypes: N, js: () => Math.abs, sym: same },
  { opType: 'Neg', code: UnaryCode.neg, dtypes: N, js: () => (x) => -x },
  { opType: 'Sign', code: UnaryCode.sign, dtypes: N, js: () => (x) => (x > 0 ? 1 : x < 0 ? -1 : x) },
  {
    opType: 'LeakyRelu',
    code: UnaryCode.leakyRelu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 0.01)],
    js: (p) => (x) => (x < 0 ? p0(p) * x : x),
  },
  {
    opType: 'Elu',
    code: UnaryCode.elu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
    js: (p) => (x) => (x < 0 ? p0(p) * Math.expm1(x) : x),
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
    js: (p) => (x) => (x <= 0 ? p2(p) * (p0(p) * Math.exp(x) - p0(p)) : p2(p) * x),
  },
  {
    opType: 'Celu',
    code: UnaryCode.celu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
    js: (p) => (x) => Math.max(0, x) + Math.min(0, p0(p) * Math.expm1(x / p0(p))),
  },
  {
    opType: 'ThresholdedRelu',
    code: UnaryCode.thresholdedRelu,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 1)],
    js: (p) => (x) => (x > p0(p) ? x : 0),
  },
  {
    opType: 'HardSigmoid',
    code: UnaryCode.hardSigmoid,
    dtypes: F,
    params: (n) => [attrFloat(n, 'alpha', 0.2), attrFloat(n, 'beta', 0.5)],
    js: (p) => (x) => clamp01(p0(p) * x + p1(p)),
  },
  {
    opType: 'Shrink',
    code: UnaryCode.shrink,
    dtypes: F,
    params: (n) => [attrFloat(n, 'lambd', 0.5), attrFloat(n, 'bias', 0)],
    js: (p) => (x) => (x < -p0(p) ? x + p1(p) : x > p0(p) ? x - p1(p) : 0),
  },
  { opType: 'Gelu', code: UnaryCode.gelu, dtypes: F, codeOf: geluCode },
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
      const fn = spec.js?.(floats)
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
